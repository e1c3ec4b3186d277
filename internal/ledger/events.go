package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
)

// EventResult is what handling an event did.
type EventResult struct {
	// Result is what the event led to.
	Result Result
	// Replayed is true when the event was handled before (or by a concurrent delivery)
	// and its stored result is repeated.
	Replayed bool
}

// HandleEvent stores a verified event and applies it, once. The event is stored first
// (its id is the key); a redelivery of an event that has a result gets that result back
// and changes nothing. Events of no kind the ledger acts on, unknown bookings and events
// that would need the payment provider when it is not configured are stored with a
// result, so the provider stops retrying them. An error means the event could not be
// applied for now (the database or the provider is unreachable): the stored event has
// no result yet, and the provider's retry applies it.
//
// The booking is read once per event: under its opening's lock, in the transition's
// transaction. Only a failed payment attempt reads it before (the only read before the
// transaction), to end its checkout first.
//
// A payment event acts only on a booking whose payment the event's account took (the
// account stored with the booking's link; the platform's own for bookings made without
// Connect): any other is stored as ResultWrongAccount and changes nothing, so a shop's
// connected account can never confirm, fail or refund another shop's booking by naming
// it in its checkout's metadata.
func (s *Service) HandleEvent(ctx context.Context, ev payments.Event) (EventResult, error) {
	ev = storable(ev)
	now := s.cfg.Now()
	bookingID, idErr := uuid.Parse(ev.BookingID)
	inserted, err := s.store(ctx, ev, uuid.NullUUID{UUID: bookingID, Valid: idErr == nil}, now)
	if err != nil {
		return EventResult{}, err
	}
	if !inserted {
		stored, err := queries.StripeEventGet(ctx, s.pool, ev.ID)
		if err != nil {
			return EventResult{}, fmt.Errorf("read stored payment event %s: %w", ev.ID, err)
		}
		if stored.Result.Valid {
			return EventResult{Result: Result(stored.Result.String), Replayed: true}, nil
		}
		// Stored by an earlier delivery that failed (or is still running): handle it
		// now. The transition below runs under the event's row lock, so two deliveries
		// never both apply it; what comes before the lock (reading the booking, ending
		// its checkout at the provider) may run twice, which is harmless: expiring an
		// expired checkout succeeds.
	}

	if ev.Connect != (ev.Account != "") {
		// The Connect endpoint receives connected accounts' events and the platform's
		// endpoint the platform's own: an event on the wrong one was misrouted (or
		// signed with a secret shared by both), and acts on nothing.
		return s.wrongAccount(ctx, ev)
	}
	switch ev.Kind {
	case payments.EventPaid, payments.EventPending, payments.EventFailed, payments.EventExpired:
	case payments.EventAccountChanged:
		return s.accountChanged(ctx, ev, now)
	case payments.EventFeeCharged, payments.EventFeeFailed:
		return s.feePaid(ctx, ev)
	default:
		// Other events are stored and acknowledged.
		return s.settle(ctx, ev.ID, ResultIgnoredType)
	}
	if idErr != nil {
		return s.settle(ctx, ev.ID, ResultUnknownBooking)
	}
	switch ev.Kind {
	case payments.EventPending:
		// Nothing to apply yet; the booking is read only to answer for an unknown one.
		b, err := queries.BookingGet(ctx, s.pool, bookingID)
		if errors.Is(err, pgx.ErrNoRows) {
			return s.settle(ctx, ev.ID, ResultUnknownBooking)
		} else if err != nil {
			return EventResult{}, fmt.Errorf("get booking %s: %w", bookingID, err)
		}
		if !tookPayment(b, &ev.Account) {
			return s.wrongAccount(ctx, ev)
		}
		return s.settle(ctx, ev.ID, ResultAwaitingPayment)
	case payments.EventFailed:
		// A failed payment attempt does not end the checkout: the customer could still
		// pay with another card after the slot went to someone else. End it first,
		// outside the transaction (a slow provider must not hold the opening's lock).
		b, err := queries.BookingGet(ctx, s.pool, bookingID)
		if errors.Is(err, pgx.ErrNoRows) {
			return s.settle(ctx, ev.ID, ResultUnknownBooking)
		}
		if err != nil {
			return EventResult{}, fmt.Errorf("get booking %s: %w", bookingID, err)
		}
		if !tookPayment(b, &ev.Account) {
			// Before the checkout is ended: another account's event must not end this
			// booking's checkout either.
			return s.wrongAccount(ctx, ev)
		}
		if b.Status == BookingPendingPayment {
			res, err := s.expireSession(ctx, b)
			if err != nil {
				return EventResult{}, err
			}
			if res != "" {
				return s.settle(ctx, ev.ID, res)
			}
		}
	}

	var out EventResult
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		stored, err := queries.StripeEventLock(ctx, tx, ev.ID)
		if err != nil {
			return fmt.Errorf("lock payment event %s: %w", ev.ID, err)
		}
		if stored.Result.Valid {
			out = EventResult{Result: Result(stored.Result.String), Replayed: true}
			return nil
		}
		var res Result
		if ev.Kind == payments.EventPaid {
			res, err = s.paid(ctx, tx, bookingID, ev.SessionID, ev.PaymentIntentID, &ev.Account, now)
		} else {
			res, err = s.failed(ctx, tx, bookingID, ev.SessionID, nil, &ev.Account, now)
		}
		if errors.Is(err, ErrBookingNotFound) {
			// Found out under the lock rather than by a read before it.
			res, err = ResultUnknownBooking, nil
		}
		if err != nil {
			return err
		}
		out = EventResult{Result: res}
		_, err = queries.StripeEventSetResult(ctx, tx, db.StripeEventSetResultParams{EventID: ev.ID, Result: pgvalue.TextOrNull(string(res)), Now: now.UTC()})
		return err
	})
	if err != nil {
		return EventResult{}, fmt.Errorf("apply payment event %s (%s) to booking %s: %w", ev.ID, ev.Kind, bookingID, err)
	}
	if !out.Replayed {
		s.counted(out.Result)
		if out.Result == ResultWrongAccount {
			s.logWrongAccount(ctx, ev)
		}
	}
	return out, nil
}

// tookPayment reports whether from, the account a payment event came from ("" for the
// platform's own), is the account that takes booking b's payment; nil (the ledger's own
// reads, made on the booking's account) always is.
func tookPayment(b db.Booking, from *string) bool {
	return from == nil || *from == b.StripeAccount.String
}

// wrongAccount settles an event from another account than its booking's, found out
// before the transition (by a read the event needed anyway).
func (s *Service) wrongAccount(ctx context.Context, ev payments.Event) (EventResult, error) {
	res, err := s.settle(ctx, ev.ID, ResultWrongAccount)
	if err == nil && !res.Replayed {
		s.logWrongAccount(ctx, ev)
	}
	return res, err
}

// logWrongAccount warns of an event ignored for its account: a misrouted endpoint, or a
// connected account naming another's booking, which an operator should look into. The
// webhook counts it (slotrecovery_stripe_events_total, result ignored_wrong_account).
func (s *Service) logWrongAccount(ctx context.Context, ev payments.Event) {
	s.log.WarnContext(ctx, "payment event from another account than the booking's ignored",
		"event_id", ev.ID, "kind", ev.Kind, "account", ev.Account, "booking_id", ev.BookingID)
}

// store inserts the event into the ledger and reports whether it was new. Postgres's
// jsonb refuses some valid JSON (a \u0000 escape, a lone surrogate); such a payload is
// stored in a cleaned form rather than refused forever, since the event's fields were
// read already and a real payment must not be dropped for an odd byte elsewhere in it.
func (s *Service) store(ctx context.Context, ev payments.Event, bookingID uuid.NullUUID, now time.Time) (bool, error) {
	params := db.StripeEventInsertParams{
		EventID: ev.ID, Type: ev.Type, BookingID: bookingID, Payload: ev.Payload, ReceivedAt: now.UTC(),
		Account: pgvalue.TextOrNull(ev.Account),
	}
	_, err := queries.StripeEventInsert(ctx, s.pool, params)
	if isDataException(err) {
		s.log.WarnContext(ctx, "payment event payload stored cleaned", "event_id", ev.ID, "err", err)
		params.Payload = cleanPayload(ev)
		_, err = queries.StripeEventInsert(ctx, s.pool, params)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("store payment event %s: %w", ev.ID, err)
	}
	return true, nil
}

// settle stores the result of an event that changes nothing. Should another delivery
// have stored a result first, that one is the answer.
func (s *Service) settle(ctx context.Context, eventID string, result Result) (EventResult, error) {
	_, err := queries.StripeEventSetResult(ctx, s.pool, db.StripeEventSetResultParams{
		EventID: eventID, Result: pgvalue.TextOrNull(string(result)), Now: s.cfg.Now().UTC(),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		stored, gerr := queries.StripeEventGet(ctx, s.pool, eventID)
		if gerr != nil {
			return EventResult{}, fmt.Errorf("read result of payment event %s: %w", eventID, gerr)
		}
		return EventResult{Result: Result(stored.Result.String), Replayed: true}, nil
	}
	if err != nil {
		return EventResult{}, fmt.Errorf("store result of payment event %s: %w", eventID, err)
	}
	return EventResult{Result: result}, nil
}

// expireSession ends a pending booking's checkout before its failure is applied. It
// returns a result when the failure must not be applied now (the checkout was paid
// meanwhile, or the provider refuses for good, or cannot be asked), "" to go on, and an
// error when a retry may help.
func (s *Service) expireSession(ctx context.Context, b db.Booking) (Result, error) {
	if !b.StripeCheckoutSessionID.Valid {
		// The link is still being made; the provider retries the event, by when it
		// exists.
		return "", fmt.Errorf("booking %s has no checkout session yet", b.ID)
	}
	if s.provider == nil {
		// Retrying cannot configure the provider. The checkout ends by itself at its
		// expiry, and that event fails the booking without asking the provider anything.
		s.log.WarnContext(ctx, "declined card not acted on: payments are not configured", "booking_id", b.ID)
		return ResultUnconfigured, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProviderTimeout)
	defer cancel()
	err := s.provider.ExpireCheckout(ctx, b.StripeAccount.String, b.StripeCheckoutSessionID.String)
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, payments.ErrAlreadyCompleted):
		return ResultKeptCompleted, nil
	case payments.Transient(err):
		return "", fmt.Errorf("expire checkout of booking %s: %w", b.ID, err)
	default:
		// The checkout ends by itself at its expiry, and that event fails the booking.
		s.log.WarnContext(ctx, "the payment provider refused to expire the checkout", "booking_id", b.ID, "err", err)
		return ResultExpireRefused, nil
	}
}

// storable returns ev with NUL characters replaced in its text fields: Postgres text
// cannot hold them, and the provider's ids never contain them, so nothing real is lost.
func storable(ev payments.Event) payments.Event {
	for _, f := range []*string{&ev.ID, &ev.Type, &ev.BookingID, &ev.SessionID, &ev.PaymentIntentID, &ev.Account} {
		*f = strings.ToValidUTF8(strings.ReplaceAll(*f, "\x00", "\uFFFD"), "\uFFFD")
	}
	return ev
}

// cleanPayload re-encodes an event's JSON so that jsonb takes it: NUL characters in
// strings and keys become U+FFFD (decoding already turned lone surrogates into it). A
// payload that does not decode is replaced by the event's id and type.
func cleanPayload(ev payments.Event) []byte {
	dec := json.NewDecoder(bytes.NewReader(ev.Payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil {
		if b, err := json.Marshal(withoutNUL(v)); err == nil {
			return b
		}
	}
	b, _ := json.Marshal(map[string]any{"id": ev.ID, "type": ev.Type, "unstorable_payload": true})
	return b
}

func withoutNUL(v any) any {
	switch t := v.(type) {
	case string:
		return strings.ReplaceAll(t, "\x00", "\uFFFD")
	case []any:
		for i := range t {
			t[i] = withoutNUL(t[i])
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[strings.ReplaceAll(k, "\x00", "\uFFFD")] = withoutNUL(x)
		}
		return out
	}
	return v
}

// isDataException reports a value Postgres refuses (SQLSTATE class 22), such as a jsonb
// payload with \u0000: storing it again as it is cannot succeed.
func isDataException(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && strings.HasPrefix(pg.Code, "22")
}

// PurgeStripeEvents deletes up to limit webhook events (their payloads carry the
// customer's details) received before `before`, and returns how many it deleted
// (internal/retention runs it until a batch is short). The retention that sets `before`
// must exceed the provider's days of retries: a redelivery of an event must still find
// it, to be answered with its stored result instead of applied again.
func PurgeStripeEvents(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.StripeEventPurge(ctx, conn, db.StripeEventPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge stripe events: %w", err)
	}
	return n, nil
}
