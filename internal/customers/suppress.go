package customers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// Why a number is suppressed (sms_suppressions.reason).
const (
	suppressedStop   = "stop"   // it said STOP, or its carrier refused a text as opted out
	suppressedErased = "erased" // the shop erased the customer who had it
)

// A shop keeps, for every number that said STOP (a customer or not) and every number it
// erased, a suppression: HMAC-SHA256 of "<shop id>:<number>" under the server's erasure
// key, never the number. Adding or importing a suppressed number opts it out, whatever
// the owner says, until the number's own START clears the suppression. The key makes
// the hash useless to whoever holds the database without it: trying every number of a
// region takes seconds against a plain hash, and gets nowhere against a keyed one.

// phoneHashes are number's keyed hashes for shopID, one per key, newest first: what a
// suppression may be kept under.
func (s *Service) phoneHashes(shopID uuid.UUID, number string) [][]byte {
	out := make([][]byte, len(s.cfg.PhoneKeys))
	for i, key := range s.cfg.PhoneKeys {
		out[i] = phoneHMAC(key, shopID, number)
	}
	return out
}

// phoneHash is number's hash under the newest key: what a suppression is recorded under.
func (s *Service) phoneHash(shopID uuid.UUID, number string) []byte {
	return phoneHMAC(s.cfg.PhoneKeys[0], shopID, number)
}

func phoneHMAC(key []byte, shopID uuid.UUID, number string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(shopID.String() + ":" + number))
	return m.Sum(nil)
}

// suppress records, in tx, that number must not be texted by shopID for reason.
func (s *Service) suppress(ctx context.Context, tx pgx.Tx, shopID uuid.UUID, number, reason string, now time.Time) error {
	if number == "" {
		return nil // an erased customer's row: its number's suppression was kept at the erasure
	}
	if err := queries.SuppressionAdd(ctx, tx, db.SuppressionAddParams{
		ShopID: shopID, PhoneHmac: s.phoneHash(shopID, number), Reason: reason, Now: now,
	}); err != nil {
		return fmt.Errorf("record suppression: %w", err)
	}
	return nil
}

// OptOut records that a customer asked not to be texted (STOP), or that the carrier
// says they did. An earlier opt-out time is kept. The number's suppression is recorded
// too (it outlives the customer's erasure, see OptOutNumber). A customer who was not
// opted out already gets a customer.opted_out event, in the same transaction.
func (s *Service) OptOut(ctx context.Context, customerID uuid.UUID) error {
	now := s.cfg.Now().UTC()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return s.optOut(ctx, tx, customerID, now)
	})
	if err != nil {
		return fmt.Errorf("opt out customer %s: %w", customerID, err)
	}
	return nil
}

// OptOutNumber records a STOP from number to shopID's number, or a carrier's refusal of
// a text to it as opted out, whether or not the number is a customer: the number's
// suppression is kept, so that a later add or import keeps it opted out until its own
// START, and the shop's customer with that number, if there is one, is opted out as
// OptOut does. It is the one way an opt-out is recorded: OptOut, by customer, takes the
// same path.
func (s *Service) OptOutNumber(ctx context.Context, shopID uuid.UUID, number string) error {
	now := s.cfg.Now().UTC()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		c, err := queries.CustomerGetByPhone(ctx, tx, db.CustomerGetByPhoneParams{ShopID: shopID, Phone: number})
		if errors.Is(err, pgx.ErrNoRows) {
			return s.suppress(ctx, tx, shopID, number, suppressedStop, now)
		}
		if err != nil {
			return fmt.Errorf("find customer by phone: %w", err)
		}
		return s.optOut(ctx, tx, c.ID, now)
	})
	if err != nil {
		return fmt.Errorf("opt out a number of shop %s: %w", shopID, err)
	}
	return nil
}

// optOut opts a customer out and records their number's suppression, in tx.
func (s *Service) optOut(ctx context.Context, tx pgx.Tx, customerID uuid.UUID, now time.Time) error {
	row, err := queries.CustomerOptOut(ctx, tx, db.CustomerOptOutParams{ID: customerID, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.suppress(ctx, tx, row.ShopID, row.Phone, suppressedStop, now); err != nil {
		return err
	}
	if row.WasOptedOut {
		return nil
	}
	c := FromRow(db.Customer{
		ID: row.ID, ShopID: row.ShopID, Phone: row.Phone, Name: row.Name, SmsOptIn: row.SmsOptIn, OptedOutAt: row.OptedOutAt,
		UnreachableAt: row.UnreachableAt, UnreachableCode: row.UnreachableCode, Priority: row.Priority, CreatedAt: row.CreatedAt,
		PrefDays: row.PrefDays, PrefWindowStarts: row.PrefWindowStarts, PrefWindowEnds: row.PrefWindowEnds,
		PrefServices: row.PrefServices, ErasedAt: row.ErasedAt, Language: row.Language, PossiblyReassignedAt: row.PossiblyReassignedAt,
	})
	return hooks.Record(ctx, tx, c.ShopID, hooks.CustomerOptedOut, now, c.API())
}

// OptIn records that a customer asked to be texted again (START, or a YES that Twilio
// counted as one); it also clears an earlier unreachable mark, since the carrier now
// delivers to the number, and the number's suppression. A customer who was not texted
// before (opted out, never opted in, or unreachable) gets a customer.opted_in event, in
// the same transaction.
func (s *Service) OptIn(ctx context.Context, customerID uuid.UUID) error {
	now := s.cfg.Now().UTC()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return s.optIn(ctx, tx, customerID, now)
	})
	if err != nil {
		return fmt.Errorf("opt in customer %s: %w", customerID, err)
	}
	return nil
}

// OptInNumber records a START from number to shopID's number, whether or not the
// number is a customer: the number's suppression goes (a later add or import takes it
// as the owner says), and the shop's customer with that number, if there is one, is
// opted in as OptIn does.
func (s *Service) OptInNumber(ctx context.Context, shopID uuid.UUID, number string) error {
	now := s.cfg.Now().UTC()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := queries.SuppressionClear(ctx, tx, db.SuppressionClearParams{
			ShopID: shopID, PhoneHmacs: s.phoneHashes(shopID, number),
		}); err != nil {
			return fmt.Errorf("clear suppression: %w", err)
		}
		c, err := queries.CustomerGetByPhone(ctx, tx, db.CustomerGetByPhoneParams{ShopID: shopID, Phone: number})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find customer by phone: %w", err)
		}
		return s.optIn(ctx, tx, c.ID, now)
	})
	if err != nil {
		return fmt.Errorf("opt in a number of shop %s: %w", shopID, err)
	}
	return nil
}

// optIn opts a customer in and clears their number's suppression, in tx.
func (s *Service) optIn(ctx context.Context, tx pgx.Tx, customerID uuid.UUID, now time.Time) error {
	row, err := queries.CustomerOptIn(ctx, tx, customerID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := queries.SuppressionClear(ctx, tx, db.SuppressionClearParams{
		ShopID: row.ShopID, PhoneHmacs: s.phoneHashes(row.ShopID, row.Phone),
	}); err != nil {
		return fmt.Errorf("clear suppression: %w", err)
	}
	if row.WasOptedIn {
		return nil
	}
	c := FromRow(db.Customer{
		ID: row.ID, ShopID: row.ShopID, Phone: row.Phone, Name: row.Name, SmsOptIn: row.SmsOptIn, OptedOutAt: row.OptedOutAt,
		UnreachableAt: row.UnreachableAt, UnreachableCode: row.UnreachableCode, Priority: row.Priority, CreatedAt: row.CreatedAt,
		PrefDays: row.PrefDays, PrefWindowStarts: row.PrefWindowStarts, PrefWindowEnds: row.PrefWindowEnds,
		PrefServices: row.PrefServices, ErasedAt: row.ErasedAt, Language: row.Language, PossiblyReassignedAt: row.PossiblyReassignedAt,
	})
	return hooks.Record(ctx, tx, c.ShopID, hooks.CustomerOptedIn, now, c.API())
}

// OptedOut reports whether shopID must not text number at the owner's word (an inbox
// reply): its customer with the number opted out, or the number is suppressed (it said
// STOP as a customer or not, its carrier refused a text as opted out, or the shop erased
// the customer who had it), matched under every erasure key. It is the inbox's OptOuts.
func (s *Service) OptedOut(ctx context.Context, shopID uuid.UUID, number string) (bool, error) {
	out, err := queries.SuppressionOptedOut(ctx, s.pool, db.SuppressionOptedOutParams{
		ShopID: shopID, PhoneHmacs: s.phoneHashes(shopID, number), Phone: number,
	})
	if err != nil {
		return false, fmt.Errorf("check opted-out number: %w", err)
	}
	return out, nil
}

// LockForErasure reads shopID's customer id in tx for its erasure, holding the row until
// tx ends, and returns their number; ErrNotFound when the shop has no such customer.
func (s *Service) LockForErasure(ctx context.Context, tx pgx.Tx, shopID, id uuid.UUID) (string, error) {
	row, err := queries.CustomerGetForShopForUpdate(ctx, tx, db.CustomerGetForShopForUpdateParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("get customer %s: %w", id, err)
	}
	return row.Phone, nil
}

// Blank erases the customer's row in tx (no name, no phone, no preferences, never
// texted; the row stays for the shop's history) and keeps a suppression of number, the
// phone LockForErasure returned: added again, the person comes back opted out, and a
// text queued before is not sent (OptedOut). Package erasure calls it within the
// erasure's transaction.
func (s *Service) Blank(ctx context.Context, tx pgx.Tx, shopID, id uuid.UUID, number string, now time.Time) error {
	if _, err := queries.CustomerErase(ctx, tx, db.CustomerEraseParams{ID: id, ShopID: shopID, Now: now}); err != nil {
		return fmt.Errorf("erase customer %s: %w", id, err)
	}
	return s.suppress(ctx, tx, shopID, number, suppressedErased, now)
}

// PhoneErased reports whether number belonged to one of shopID's erased customers, so a
// text queued before the erasure is not sent.
func (s *Service) PhoneErased(ctx context.Context, shopID uuid.UUID, number string) (bool, error) {
	erased, err := queries.SuppressionErased(ctx, s.pool, db.SuppressionErasedParams{ShopID: shopID, PhoneHmacs: s.phoneHashes(shopID, number)})
	if err != nil {
		return false, fmt.Errorf("check erased phone: %w", err)
	}
	return erased, nil
}
