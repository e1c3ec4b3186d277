package senders

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// SMSTexter sends one text; *twilio.Sender and sms.LogSender implement it.
type SMSTexter interface {
	Text(ctx context.Context, m sms.Message) (sid string, err error)
}

// Texter sends the texts of a shop with its own sender through its Messaging Service,
// and the others from their number as before: the packages that text (offers, outbox)
// name the shop's number in From and know nothing of services.
type Texter struct {
	next SMSTexter
	pool *pgxpool.Pool
}

// NewTexter returns a Texter over next.
func NewTexter(next SMSTexter, pool *pgxpool.Pool) *Texter {
	return &Texter{next: next, pool: pool}
}

// Text sends m, through the Messaging Service of the sender whose number is m.From when
// there is one.
func (t *Texter) Text(ctx context.Context, m sms.Message) (string, error) {
	if m.MessagingServiceSID == "" && m.From != "" {
		sid, err := queries.SenderServiceByNumber(ctx, t.pool, pgvalue.TextOrNull(m.From))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			// Not sent: a text from the number rather than its service could break
			// the sticky sender or go out unregistered.
			return "", fmt.Errorf("find the messaging service of the sender: %w", err)
		default:
			m.MessagingServiceSID = sid
		}
	}
	return t.next.Text(ctx, m)
}
