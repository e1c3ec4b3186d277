package customers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// SMSFailure is a text of a shop's that did not reach its recipient, as its sender or a
// delivery report tells it.
type SMSFailure struct {
	ShopID uuid.UUID
	// Number is the recipient's number; CustomerID the shop's customer with it when the
	// caller knows them (uuid.Nil: look them up by Number). One of the two is needed
	// for a failure that concerns the recipient.
	Number     string
	CustomerID uuid.UUID
	Reason     sms.Reason
	// Code is the provider's error code, kept for the owner and the logs.
	Code int
}

// SMSFailed records what a failed text says of its recipient and of the shop: the one
// rule for every send error (offers, transactional texts) and every delivery report.
//   - sms.ReasonOptedOut (the carrier refused an opted-out number): an opt-out of the
//     number, kept as a STOP is, customer or not (OptOutNumber), and the shop's
//     customer with it marked unreachable with the code, which tells the owner why;
//     their own START lifts both;
//   - sms.ReasonUnreachable: the shop's customer with the number is marked unreachable
//     (no wave tries them again; a START clears it); a stranger has nothing to mark;
//   - sms.ReasonAccount: the shop's own number or account cannot text there (the
//     dashboard's banner); the recipient is not at fault and is left alone;
//   - anything else (a refusal for now, an outage): nothing about anyone.
//
// It is idempotent: a report applied twice changes nothing more.
func (s *Service) SMSFailed(ctx context.Context, f SMSFailure) error {
	switch f.Reason {
	case sms.ReasonOptedOut:
		var err error
		if f.Number == "" {
			err = s.OptOut(ctx, f.CustomerID)
		} else {
			err = s.OptOutNumber(ctx, f.ShopID, f.Number)
		}
		if err != nil {
			return err
		}
		return s.markUnreachable(ctx, f)
	case sms.ReasonUnreachable:
		return s.markUnreachable(ctx, f)
	case sms.ReasonAccount:
		return shops.RecordSMSProblem(ctx, s.pool, f.ShopID, f.Code, s.cfg.Now())
	}
	return nil
}

// markUnreachable marks the failure's customer unreachable: the one given, else the
// shop's customer with the number (none: a stranger, nothing to mark).
func (s *Service) markUnreachable(ctx context.Context, f SMSFailure) error {
	id := f.CustomerID
	if id == uuid.Nil {
		c, err := queries.CustomerGetByPhone(ctx, s.pool, db.CustomerGetByPhoneParams{ShopID: f.ShopID, Phone: f.Number})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find the customer a text failed to reach: %w", err)
		}
		id = c.ID
	}
	return s.MarkUnreachable(ctx, id, f.Code)
}
