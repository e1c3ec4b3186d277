// Package delivery takes the SMS provider's delivery reports. The provider accepting a
// text is not the customer receiving it: carriers drop texts (an unreachable handset, a
// number that opted out at the carrier, filtering). Every text the server sends asks
// for status callbacks, and Service.Record takes them:
//
//   - every report is stored by message id first (delivery_reports, this package's
//     table), keeping the most final word, because reports repeat, arrive out of order,
//     and may come before the sender has stored the id its send returned;
//   - an offer's text is the offers' to apply (offers.ApplyDelivery: a failed text fails
//     its live offer and the next wave replaces it; a wave applies the reports that came
//     before it stored its ids);
//   - any other text (a transactional one, an owner's reply) gets its final status in the
//     owner's inbox (inbox.MarkDelivery), and a failure says what it says of the
//     recipient at the shop whose number sent it;
//   - what a failure says of a recipient or a shop is the one rule every failed text
//     follows (customers.SMSFailed): a carrier-level opt-out is kept for the number, an
//     unreachable number marks the shop's customer with it, a problem with our own
//     account or number leaves the recipient alone.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

var queries = db.New()

// Offers applies a stored report to the offer whose text it was (offers.Service).
type Offers interface {
	ApplyDelivery(ctx context.Context, sid string) (handled bool, err error)
}

// Service records delivery reports.
type Service struct {
	pool   db.DBTX
	offers Offers
	shops  *shops.Service
	cust   *customers.Service
	now    func() time.Time
}

// New returns a Service on pool; now is the clock (nil: time.Now).
func New(pool db.DBTX, offers Offers, shopsSvc *shops.Service, customersSvc *customers.Service, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{pool: pool, offers: offers, shops: shopsSvc, cust: customersSvc, now: now}
}

// RecordDelivery implements the status callback's recorder (internal/webhooks). It is
// idempotent; an error means the report was not stored and the provider should retry.
func (s *Service) RecordDelivery(ctx context.Context, r sms.DeliveryReport) error {
	if r.MessageID == "" {
		return nil
	}
	if err := queries.DeliveryReportRecord(ctx, s.pool, db.DeliveryReportRecordParams{
		MessageSid: r.MessageID, Status: string(r.Status), Reason: r.Reason.String(),
		ErrorCode: pgvalue.Int4OrNull(r.ErrorCode), Now: s.now().UTC(),
	}); err != nil {
		return fmt.Errorf("store delivery report: %w", err)
	}
	handled, err := s.offers.ApplyDelivery(ctx, r.MessageID)
	if err != nil || handled {
		return err
	}
	if r.Status.Final() {
		if _, err := inbox.MarkDelivery(ctx, s.pool, r.MessageID, !r.Status.Failed()); err != nil {
			return err
		}
	}
	return s.applyToNumber(ctx, r)
}

// applyToNumber applies a failed text's report that no offer took (a transactional
// text's, or an offer's whose id the wave has not stored yet: applied again then, which
// changes nothing more) to the recipient's number at the shop whose number sent it.
func (s *Service) applyToNumber(ctx context.Context, r sms.DeliveryReport) error {
	// Every failure goes to the one rule (customers.SMSFailed), whatever its reason: an
	// account problem raises the shop's banner for a transactional text as for an offer.
	if !r.Status.Failed() || r.To == "" || r.From == "" {
		return nil
	}
	shopID, err := s.shops.IDByNumber(ctx, r.From)
	if errors.Is(err, shops.ErrShopNotFound) {
		return nil // not from a shop's number (any more): nothing of ours to change
	}
	if err != nil {
		return err
	}
	return s.cust.SMSFailed(ctx, customers.SMSFailure{ShopID: shopID, Number: r.To, Reason: r.Reason, Code: r.ErrorCode})
}

// Purge deletes up to limit delivery reports received before `before`, and returns how
// many it deleted (internal/retention runs it until a batch is short); they only matter
// while their texts' offers can still change.
func Purge(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.DeliveryReportPurge(ctx, conn, db.DeliveryReportPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge delivery reports: %w", err)
	}
	return n, nil
}
