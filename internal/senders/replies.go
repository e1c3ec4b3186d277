package senders

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// The owner's replies a shop may send (API and dashboard together): a minute's worth
// per shop and per conversation, each refilled evenly over the minute.
var (
	RepliesPerShop         = ratelimit.Limit{Burst: 30, Every: 2 * time.Second}
	RepliesPerConversation = ratelimit.Limit{Burst: 5, Every: 12 * time.Second}
)

// QuietReplyAfter is how recently a customer must have written for the owner's reply to
// go out in the shop's quiet hours: an answer to what they just asked is expected, a
// text out of the blue at night is not.
const QuietReplyAfter = time.Hour

// ErrRepliesUnavailable: the reply limits could not be asked (Redis); nothing is sent.
var ErrRepliesUnavailable = problem.New(problem.Unavailable, "unavailable", "replies cannot be sent right now; retry shortly")

// Limiter takes one event from a key's bucket, and gives one back (ratelimit.Limiter).
type Limiter interface {
	Allow(ctx context.Context, key string, limit ratelimit.Limit) (ratelimit.Result, error)
	Return(ctx context.Context, key string, limit ratelimit.Limit) error
}

// OwnerReplies holds an owner's reply to the rules every text of the shop's meets
// (inbox.ReplyRules): SMS_US_A2P=required (409 sender_not_registered, as declaring an
// opening), the shop's quiet hours unless the customer wrote within QuietReplyAfter
// (422 quiet_hours, with when it may go), then RepliesPerConversation and RepliesPerShop
// (429 too_many_replies with Retry-After).
type OwnerReplies struct {
	Senders *Service
	Shops   *shops.Service
	Limits  Limiter
}

// CheckReply is inbox.ReplyRules's: nil, or the problem that refuses the reply now.
func (o OwnerReplies) CheckReply(ctx context.Context, shopID, conversationID uuid.UUID, lastIn, now time.Time) error {
	shop, err := o.Shops.Get(ctx, shopID)
	if err != nil {
		return err
	}
	if err := o.Senders.CheckCanText(ctx, shop); err != nil {
		return err
	}
	if q := shop.Policy.Quiet; q != nil && now.Sub(lastIn) > QuietReplyAfter {
		local := now.In(shop.Location)
		if q.Contains(local) {
			from := q.EndAfter(local)
			return &problem.Error{Kind: problem.Invalid, Code: "quiet_hours", Message: fmt.Sprintf(
				"it is the shop's quiet hours and the customer has not written in the last hour: the reply may be sent from %s",
				from.Format("Mon 2 Jan 15:04 MST"))}
		}
	}
	if o.Limits == nil {
		return nil
	}
	conv := "owner_replies:conversation:" + conversationID.String()
	if err := o.take(ctx, conv, RepliesPerConversation, "this conversation"); err != nil {
		return err
	}
	if err := o.take(ctx, "owner_replies:shop:"+shopID.String(), RepliesPerShop, "the shop"); err != nil {
		var p *problem.Error
		if errors.As(err, &p) && p.Kind == problem.Limited {
			// Not sent: the conversation's turn is given back.
			_ = o.Limits.Return(context.WithoutCancel(ctx), conv, RepliesPerConversation)
		}
		return err
	}
	return nil
}

// take takes one reply from key's limit, or says how long until one is free.
func (o OwnerReplies) take(ctx context.Context, key string, limit ratelimit.Limit, whose string) error {
	res, err := o.Limits.Allow(ctx, key, limit)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRepliesUnavailable, err)
	}
	if !res.Allowed {
		secs := int64((res.RetryAfter + time.Second - 1) / time.Second)
		return &problem.Error{Kind: problem.Limited, Code: "too_many_replies", RetryAfter: res.RetryAfter,
			Message: fmt.Sprintf("%d replies a minute is the most for %s; the next may go in %d seconds", limit.Burst, whose, max(secs, 1))}
	}
	return nil
}
