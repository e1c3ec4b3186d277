package offers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// Delivery reports reach offers through internal/delivery, which stores each by message
// id (delivery_reports) and asks ApplyDelivery whether an offer's text it was. A report
// may come before the wave stored its text's id; sendChunk applies the stored ones when
// it does (applyDeliveries). An undelivered or failed text fails its offer if it was
// still live: it no longer counts as offered, and the next wave of the round texts one
// more customer in its place (recordWave, OfferShortfall); what the failure says of the
// customer is recorded as every failed text's is (customers.SMSFailed).

// ApplyDelivery applies the stored delivery report of message id sid to the offer whose
// text it was, if any, and says whether one took it.
func (s *Service) ApplyDelivery(ctx context.Context, sid string) (handled bool, err error) {
	return s.applyDelivery(ctx, sid)
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
		if err := s.customers.SMSFailed(ctx, customers.SMSFailure{ShopID: r.ShopID, CustomerID: r.CustomerID, Reason: sms.ParseReason(r.Reason), Code: int(r.Code)}); err != nil {
			return true, err
		}
		s.log.InfoContext(ctx, "offer text not delivered; the next wave replaces it",
			"offer_id", r.ID, "opening_id", r.OpeningID, "reason", r.Reason, "provider_code", r.Code)
	}
	return len(rows) > 0, nil
}
