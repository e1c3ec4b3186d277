package offers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// Delivery truth. The provider accepting a text is not the customer receiving it:
// carriers drop texts (an unreachable handset, a number that opted out at the carrier,
// filtering). Each offer text asks for status callbacks, and RecordDelivery takes them:
//
//   - every report is stored by message id first (delivery_reports), keeping the most
//     final word, because reports repeat, arrive out of order, and may come before the
//     wave has stored the id its send returned (sendChunk applies stored reports when it
//     does);
//   - an undelivered or failed text fails its offer if it was still live: it no longer
//     counts as offered, and the next wave of the round texts one more customer in its
//     place (recordWave, OfferShortfall);
//   - the customer's side: a carrier-level opt-out (sms.ReasonOptedOut, Twilio's 21610)
//     opts them out, an unreachable number marks them unreachable; a problem with our
//     own account or number (sms.ReasonAccount) leaves them alone.
//
// A failed text that no offer takes (a transactional text's: a booking's confirmation,
// a payment link; or an offer's whose id the wave has not stored yet) still says what
// it says of the recipient: a carrier-level opt-out is kept for the number at the shop
// that sent it (as a STOP is, customer or not), an unreachable number marks the shop's
// customer with it (applyToNumber).

// RecordDelivery implements the status callback's recorder (internal/webhooks). It is
// idempotent; an error means the report was not stored and the provider should retry.
func (s *Service) RecordDelivery(ctx context.Context, r sms.DeliveryReport) error {
	if r.MessageID == "" {
		return nil
	}
	if err := queries.DeliveryReportRecord(ctx, s.pool, db.DeliveryReportRecordParams{
		MessageSid: r.MessageID, Status: string(r.Status), Reason: r.Reason.String(),
		ErrorCode: pgInt4(r.ErrorCode), Now: s.cfg.Now().UTC(),
	}); err != nil {
		return fmt.Errorf("store delivery report: %w", err)
	}
	handled, err := s.applyDelivery(ctx, r.MessageID)
	if err != nil || handled {
		return err
	}
	if r.Status.Final() {
		// A text the owner's inbox shows (an owner's reply) is delivered or failed there.
		if _, err := inbox.MarkDelivery(ctx, s.pool, r.MessageID, !r.Status.Failed()); err != nil {
			return err
		}
	}
	return s.applyToNumber(ctx, r)
}

// applyToNumber applies a failed text's report that no offer took to the recipient's
// number at the shop whose number sent it. Both are idempotent: an offer's report
// applied again once the wave stores its id changes nothing more.
func (s *Service) applyToNumber(ctx context.Context, r sms.DeliveryReport) error {
	if !r.Status.Failed() || r.To == "" || r.From == "" ||
		(r.Reason != sms.ReasonOptedOut && r.Reason != sms.ReasonUnreachable) {
		return nil
	}
	shopID, err := s.shops.IDByNumber(ctx, r.From)
	if errors.Is(err, shops.ErrShopNotFound) {
		return nil // not from a shop's number (any more): nothing of ours to change
	}
	if err != nil {
		return err
	}
	if r.Reason == sms.ReasonOptedOut {
		return s.shops.OptOutNumber(ctx, shopID, r.To)
	}
	c, err := s.shops.CustomerByPhone(ctx, shopID, r.To)
	if p, ok := problem.As(err); ok && p.Kind == problem.NotFound {
		return nil // a stranger: there is no one to mark
	}
	if err != nil {
		return err
	}
	return s.shops.MarkUnreachable(ctx, c.ID, r.ErrorCode)
}

// applyDeliveries applies the stored reports of the given message ids to their offers,
// and to the customers of offers whose text failed just now.
//
// Each offer is updated by a statement of its own. One UPDATE of a chunk's offers would
// lock them in an order of its own and could wait for one (a YES losing the opening's
// offers holds it) while holding others: a deadlock, and the wave's run would fail. A
// one-row statement waits holding nothing. A chunk's reports have rarely come before its
// ids were stored, so the wave first asks which have (one read, usually empty).
func (s *Service) applyDeliveries(ctx context.Context, sids []string) error {
	sids = slices.DeleteFunc(slices.Clone(sids), func(sid string) bool { return sid == "" })
	if len(sids) > 1 {
		reported, err := queries.DeliveryReportsStored(ctx, s.pool, sids)
		if err != nil {
			return fmt.Errorf("find stored delivery reports: %w", err)
		}
		sids = reported
	}
	return s.applyReported(ctx, sids)
}

// applyReported applies the stored reports of message ids known to have one (the
// wave's marks say which), one statement each.
func (s *Service) applyReported(ctx context.Context, sids []string) error {
	var errs error
	for _, sid := range sids {
		_, err := s.applyDelivery(ctx, sid)
		errs = errors.Join(errs, err)
	}
	return errs
}

// applyDelivery applies the stored report of one message id (see applyDeliveries). It
// says whether an offer took the report (then the customer's side of it is done here);
// a repeated report is taken by none, and applyToNumber's changes are idempotent.
func (s *Service) applyDelivery(ctx context.Context, sid string) (handled bool, err error) {
	rows, err := queries.OfferApplyDelivery(ctx, s.pool, sid)
	if err != nil {
		return false, fmt.Errorf("apply delivery report: %w", err)
	}
	for _, r := range rows {
		if !r.FailedNow {
			continue
		}
		switch r.Reason {
		case sms.ReasonOptedOut.String():
			err = s.shops.OptOut(ctx, r.CustomerID)
		case sms.ReasonUnreachable.String():
			err = s.shops.MarkUnreachable(ctx, r.CustomerID, int(r.Code))
		case sms.ReasonAccount.String():
			err = s.shops.RecordSMSProblem(ctx, r.ShopID, int(r.Code))
		}
		if err != nil {
			return true, err
		}
		s.log.InfoContext(ctx, "offer text not delivered; the next wave replaces it",
			"offer_id", r.ID, "opening_id", r.OpeningID, "reason", r.Reason, "provider_code", r.Code)
	}
	return len(rows) > 0, nil
}

// PurgeDeliveryReports deletes up to limit delivery reports received before `before`,
// and returns how many it deleted (internal/retention runs it until a batch is short);
// they only matter while their texts' offers can still change.
func PurgeDeliveryReports(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.DeliveryReportPurge(ctx, conn, db.DeliveryReportPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge delivery reports: %w", err)
	}
	return n, nil
}
