package shops

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// The owner's alert number is confirmed before it is used (issue 49): a number the owner
// types is only pending until the code texted to it comes back through the dashboard or
// the API, so alerts, which quote customers' texts, never go to a number typed wrong or
// to somebody else's phone.
const (
	// NotifyCodeValid is how long a texted code can be entered.
	NotifyCodeValid = 15 * time.Minute
	// NotifyCodeAttempts is how many wrong codes end a code: a new one must be sent.
	NotifyCodeAttempts = 5
	// NotifyCodeEvery is the least time between two codes for one shop.
	NotifyCodeEvery = time.Minute
	// NotifyCodesADay is how many codes one shop may have texted in a day (UTC).
	NotifyCodesADay = 5
)

// Errors of the alert number's confirmation.
var (
	ErrNoPendingNotifyPhone = problem.New(problem.Conflict, "no_pending_notify_phone",
		"no alert number waits for its code: set notify_phone first, and a code is texted to it")
	ErrNotifyCodeWrong = problem.New(problem.Invalid, "invalid_code",
		"that is not the code texted to the alert number")
	ErrNotifyCodeExpired = problem.New(problem.Invalid, "code_expired",
		"the code has expired or was tried too often: set notify_phone again for a new one")
)

// PendingNotifyPhone is an alert number waiting for its code.
type PendingNotifyPhone struct {
	Phone     string
	ExpiresAt time.Time
}

// NotifyCode is a code to text to a pending alert number.
type NotifyCode struct {
	Phone     string
	Code      string
	SentAt    time.Time
	ExpiresAt time.Time
}

// StartNotifyPhone makes number the shop's pending alert number with a new code, in the
// caller's transaction (which queues the text that carries it, so a code exists only if
// its text does). The confirmed number, if any, keeps its alerts until the new one is
// confirmed. Codes are limited: one a minute and NotifyCodesADay a day for a shop.
func StartNotifyPhone(ctx context.Context, tx pgx.Tx, shop Shop, number string, now time.Time) (NotifyCode, error) {
	number = strings.TrimSpace(number)
	if err := CheckNotifyPhone(shop, number); err != nil {
		return NotifyCode{}, err
	}
	cur, err := queries.NotifyPhonePendingLock(ctx, tx, shop.ID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return NotifyCode{}, fmt.Errorf("lock pending alert number: %w", err)
	default:
		if wait := cur.SentAt.Add(NotifyCodeEvery).Sub(now); wait > 0 {
			return NotifyCode{}, &problem.Error{Kind: problem.Limited, Code: "code_recently_sent",
				Message: "a code was texted less than a minute ago; wait a minute before asking for another", RetryAfter: wait}
		}
		today := now.UTC().Truncate(24 * time.Hour)
		if cur.SendsDay.Time.Equal(today) && cur.Sends >= NotifyCodesADay {
			return NotifyCode{}, &problem.Error{Kind: problem.Limited, Code: "too_many_codes",
				Message: fmt.Sprintf("%d codes were texted today; try again tomorrow", NotifyCodesADay), RetryAfter: today.Add(24 * time.Hour).Sub(now)}
		}
	}
	code, err := newNotifyCode()
	if err != nil {
		return NotifyCode{}, err
	}
	out := NotifyCode{Phone: number, Code: code, SentAt: now, ExpiresAt: now.Add(NotifyCodeValid)}
	if _, err := queries.NotifyPhonePendingPut(ctx, tx, db.NotifyPhonePendingPutParams{
		ShopID: shop.ID, Phone: number, CodeHash: notifyCodeHash(shop.ID, number, code), SentAt: now, ExpiresAt: out.ExpiresAt,
	}); err != nil {
		return NotifyCode{}, fmt.Errorf("store pending alert number: %w", err)
	}
	return out, nil
}

// CheckNotifyPhone refuses a number that cannot be shop's alert number, before anything
// else of an owner's change is applied.
func CheckNotifyPhone(shop Shop, number string) error {
	if !phone.Valid(number) {
		return problem.Invalidf("notify_phone", "notify_phone must be in E.164 form, e.g. +15555550199, or null for no alerts")
	}
	if number == shop.SMSNumber {
		return problem.Invalidf("notify_phone", "notify_phone must be the owner's own phone, not the shop's SMS number")
	}
	return nil
}

// ConfirmNotifyPhone makes the pending alert number the shop's when code is the one
// texted to it; a wrong code counts, and NotifyCodeAttempts of them end the code.
func (s *Service) ConfirmNotifyPhone(ctx context.Context, shopID uuid.UUID, code string, now time.Time) (Shop, error) {
	code = strings.Join(strings.Fields(code), "")
	var out Shop
	var wrong bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		p, err := queries.NotifyPhonePendingLock(ctx, tx, shopID)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNoPendingNotifyPhone
		}
		if err != nil {
			return fmt.Errorf("lock pending alert number: %w", err)
		}
		if !now.Before(p.ExpiresAt) || p.Attempts >= NotifyCodeAttempts {
			return ErrNotifyCodeExpired
		}
		if !hmac.Equal(notifyCodeHash(shopID, p.Phone, code), p.CodeHash) {
			// The attempt is counted in this transaction, which commits: the error
			// is returned after it.
			wrong = true
			return queries.NotifyPhonePendingAttempt(ctx, tx, shopID)
		}
		row, err := queries.ShopSetNotifyPhone(ctx, tx, db.ShopSetNotifyPhoneParams{ID: shopID, NotifyPhone: pgtype.Text{String: p.Phone, Valid: true}})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrShopNotFound
		}
		if err != nil {
			return fmt.Errorf("set alert number: %w", err)
		}
		if err := queries.NotifyPhonePendingDelete(ctx, tx, shopID); err != nil {
			return fmt.Errorf("end pending alert number: %w", err)
		}
		out, err = s.fromRow(row)
		return err
	})
	if err == nil && wrong {
		return Shop{}, ErrNotifyCodeWrong
	}
	return out, err
}

// RemoveNotifyPhone ends the shop's alerts: no confirmed number, none pending.
func (s *Service) RemoveNotifyPhone(ctx context.Context, shopID uuid.UUID) (Shop, error) {
	var out Shop
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := queries.NotifyPhonePendingDelete(ctx, tx, shopID); err != nil {
			return fmt.Errorf("end pending alert number: %w", err)
		}
		row, err := queries.ShopSetNotifyPhone(ctx, tx, db.ShopSetNotifyPhoneParams{ID: shopID})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrShopNotFound
		}
		if err != nil {
			return fmt.Errorf("remove alert number: %w", err)
		}
		out, err = s.fromRow(row)
		return err
	})
	return out, err
}

// PendingNotifyPhone returns the shop's alert number waiting for its code, if one does and its
// code can still be entered.
func (s *Service) PendingNotifyPhone(ctx context.Context, shopID uuid.UUID, now time.Time) (PendingNotifyPhone, bool, error) {
	p, err := queries.NotifyPhonePendingGet(ctx, s.pool, shopID)
	if errors.Is(err, pgx.ErrNoRows) {
		return PendingNotifyPhone{}, false, nil
	}
	if err != nil {
		return PendingNotifyPhone{}, false, fmt.Errorf("read pending alert number: %w", err)
	}
	if !now.Before(p.ExpiresAt) || p.Attempts >= NotifyCodeAttempts {
		return PendingNotifyPhone{}, false, nil
	}
	return PendingNotifyPhone{Phone: p.Phone, ExpiresAt: p.ExpiresAt}, true, nil
}

// newNotifyCode is six random digits.
func newNotifyCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("make alert code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// notifyCodeHash keeps a code bound to its shop and number: a code is worth nothing for
// another shop's pending number.
func notifyCodeHash(shopID uuid.UUID, number, code string) []byte {
	m := hmac.New(sha256.New, shopID[:])
	m.Write([]byte(number + "\x00" + code))
	return m.Sum(nil)
}

// SendNotifyCode makes number the shop's pending alert number and queues the text that
// carries its code (body words it), in one transaction: the code exists only if its text
// is queued. The text goes through the one send path, so a number that said STOP is
// never texted; it is kept out of the conversations (the number is the owner's).
func (s *Service) SendNotifyCode(ctx context.Context, queue jobs.Inserter, shop Shop, number string, body func(code string) string, now time.Time) (PendingNotifyPhone, error) {
	var out PendingNotifyPhone
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		c, err := StartNotifyPhone(ctx, tx, shop, number, now)
		if err != nil {
			return err
		}
		if _, err := inbox.Queue(ctx, tx, queue, inbox.Outgoing{
			Key:    "notify_phone_code:" + shop.ID.String() + ":" + strconv.FormatInt(now.UnixNano(), 10),
			ShopID: shop.ID, From: shop.SMSNumber, To: c.Phone, Body: body(c.Code),
			NotAfter: c.ExpiresAt, Shown: inbox.ShownNowhere, At: now,
		}); err != nil {
			return fmt.Errorf("queue alert number's code: %w", err)
		}
		out = PendingNotifyPhone{Phone: c.Phone, ExpiresAt: c.ExpiresAt}
		return nil
	})
	return out, err
}
