package hooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// claimRecords is what the YES's claim (slots' BookingClaim, one statement) adds to its
// final SELECT to record opening.filled, and booking.confirmed after it for a booking
// confirmed at once, with the data Go rendered before the claim ($5, hooks.ClaimData;
// NULL when the shop had no subscribed endpoint then) for the booking id Go chose. The
// guard keeps a shop without a subscribed endpoint from ever touching webhook_events.
const claimRecords = `
    CASE WHEN $5::jsonb IS NOT NULL AND EXISTS (SELECT FROM webhook_subscribers(b.shop_id, webhook_claim_types(b.status)))
         THEN webhook_record(b.shop_id, webhook_claim_types(b.status), b.created_at, $5::jsonb)
         ELSE 0 END AS events_recorded`

// claimLike is a claim in one statement, shaped like BookingClaim: fill the opening,
// insert the booking ($6, or an id of its own), record the events.
const claimLike = `
WITH filled AS (
    UPDATE slot_openings s
    SET status = 'filled', filled_by = $2, filled_at = $3, updated_at = $3, version = version + 1
    WHERE s.id = $1 AND s.status = 'open'
    RETURNING s.*
), booking AS (
    INSERT INTO bookings (id, opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at, confirmed_at)
    SELECT COALESCE($6::uuid, gen_random_uuid()), f.id, $2, f.shop_id, $4, f.price_cents, 'gbp', $3, $3,
        CASE WHEN $4 = 'confirmed' THEN $3::timestamptz END
    FROM filled f
    RETURNING *
)
SELECT b.id,` + claimRecords + `
FROM booking b JOIN filled f ON f.id = b.opening_id`

// claimFacts is what the claimable offers are read with (inbound's InboundStoreMany,
// slots' OfferListClaimable): the facts of the claim's events, only for a shop with an
// endpoint subscribed to them.
const claimFacts = `
SELECT CASE WHEN EXISTS (SELECT FROM webhook_subscribers(s.shop_id, webhook_claim_types('confirmed')))
            THEN webhook_opening_facts(s.id, NULL) || webhook_claim_facts(NULL, $2) END
FROM slot_openings s WHERE s.id = $1`

// opening inserts an open opening of shop (as slots.Declare would, without its wave).
func (s *scene) opening(shop shops.Shop, startsAt time.Time) uuid.UUID {
	s.t.Helper()
	var id uuid.UUID
	require.NoError(s.t, s.pool.QueryRow(context.Background(), `INSERT INTO slot_openings
		(shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
		VALUES ($1, $2, 45, 'Haircut', 3500, 'open', now(), now()) RETURNING id`, shop.ID, startsAt).Scan(&id))
	return id
}

func (s *scene) customer(shop shops.Shop, phone, name string) customers.Customer {
	s.t.Helper()
	c, err := s.customers.Add(context.Background(), shop.ID, customers.NewCustomer{Phone: phone, Name: name, SMSOptIn: true})
	require.NoError(s.t, err)
	return c
}

func (s *scene) subjects() (types []string, subjects []api.Opening) {
	s.t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT type, subject FROM webhook_events ORDER BY seq`)
	require.NoError(s.t, err)
	defer rows.Close()
	for rows.Next() {
		var typ string
		var raw []byte
		require.NoError(s.t, rows.Scan(&typ, &raw))
		sub, err := hooks.DecodeOpening(raw)
		require.NoError(s.t, err, "%s", raw)
		types, subjects = append(types, typ), append(subjects, sub)
	}
	require.NoError(s.t, rows.Err())
	return types, subjects
}

// TestRecordOpeningKeepsTheStateAtTheEvent: each opening event's subject is the opening
// and booking as they stood in the transaction that changed them, and stays so whatever
// happens to them later.
func TestRecordOpeningKeepsTheStateAtTheEvent(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	s.endpoint(r, hooks.OpeningDeclared, hooks.OpeningFilled, hooks.BookingConfirmed)
	bea := s.customer(s.shop, "+447700900111", "Bea Smith")
	startsAt := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	id := s.opening(s.shop, startsAt)
	now := time.Now()
	require.NoError(t, hooks.RecordOpening(ctx, s.pool, s.shop.ID, hooks.OpeningDeclared, now, id, uuid.Nil))

	var booking uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now() WHERE id = $1`, id, bea.ID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
			VALUES ($1, $2, $3, 'pending_payment', 3500, 'gbp', now(), now()) RETURNING id`, id, bea.ID, s.shop.ID).Scan(&booking); err != nil {
			return err
		}
		return hooks.RecordOpening(ctx, tx, s.shop.ID, hooks.OpeningFilled, now, id, booking)
	}))
	require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE bookings SET status = 'confirmed', payment_url = 'https://pay.example/x', confirmed_at = now() WHERE id = $1`, booking); err != nil {
			return err
		}
		return hooks.RecordOpening(ctx, tx, s.shop.ID, hooks.BookingConfirmed, now, id, booking)
	}))
	// Not subscribed: nothing recorded.
	require.NoError(t, hooks.RecordOpening(ctx, s.pool, s.shop.ID, hooks.OpeningCancelled, now, id, uuid.Nil))
	// Another shop's opening: nothing recorded.
	require.NoError(t, hooks.RecordOpening(ctx, s.pool, uuid.New(), hooks.OpeningDeclared, now, id, uuid.Nil))
	require.Error(t, hooks.RecordOpening(ctx, s.pool, s.shop.ID, hooks.CustomerOptedIn, now, id, uuid.Nil), "not an opening type")

	types, subs := s.subjects()
	require.Equal(t, []string{hooks.OpeningDeclared, hooks.OpeningFilled, hooks.BookingConfirmed}, types)
	declared, filled, confirmed := subs[0], subs[1], subs[2]
	require.Equal(t, id, declared.ID)
	require.Equal(t, s.shop.ID, declared.ShopID)
	require.Equal(t, "open", declared.Status)
	require.True(t, startsAt.Equal(declared.StartsAt))
	require.Equal(t, 45, declared.DurationMinutes)
	require.Equal(t, "Haircut", declared.Service)
	require.EqualValues(t, 3500, declared.PriceCents)
	require.Equal(t, "gbp", declared.Currency)
	require.Nil(t, declared.Booking)
	require.Nil(t, declared.FilledBy)

	require.Equal(t, "filled", filled.Status)
	require.NotNil(t, filled.FilledBy)
	require.Equal(t, bea.ID, filled.FilledBy.CustomerID)
	require.Equal(t, "Bea Smith", filled.FilledBy.Name)
	require.Equal(t, "+447700900111", filled.FilledBy.Phone)
	require.Equal(t, booking, filled.Booking.ID)
	require.Equal(t, "pending_payment", filled.Booking.Status, "the booking as it was then, though it is confirmed now")
	require.Nil(t, filled.Booking.PaymentURL)

	require.Equal(t, "confirmed", confirmed.Booking.Status)
	require.Equal(t, "https://pay.example/x", *confirmed.Booking.PaymentURL)
}

// TestClaimRecordsInItsOwnStatement: the fragment a one-statement claim adds records
// opening.filled (and booking.confirmed, after it, for a booking confirmed at once) with
// the data rendered in Go before the claim, from the facts the claimable offer was read
// with — only for a shop with a subscribed endpoint, which alone gets facts to render.
func TestClaimRecordsInItsOwnStatement(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	bea := s.customer(s.shop, "+447700900111", "Bea")
	recorded := 0
	claim := func(opening uuid.UUID, status string) uuid.UUID {
		t.Helper()
		var facts []byte
		require.NoError(t, s.pool.QueryRow(ctx, claimFacts, opening, bea.ID).Scan(&facts))
		now := time.Now()
		var data []byte
		var id uuid.NullUUID
		if facts != nil {
			id = uuid.NullUUID{UUID: uuid.New(), Valid: true}
			var err error
			data, err = hooks.ClaimData(facts, id.UUID, status == "confirmed", now)
			require.NoError(t, err)
		}
		var booking uuid.UUID
		require.NoError(t, s.pool.QueryRow(ctx, claimLike, opening, bea.ID, now.UTC(), status, data, id).Scan(&booking, &recorded))
		if id.Valid {
			require.Equal(t, id.UUID, booking, "the booking has the id its events were rendered with")
		}
		return booking
	}
	claim(s.opening(s.shop, time.Now().Add(24*time.Hour)), "pending_payment")
	require.Zero(t, s.count(`SELECT count(*) FROM webhook_events`), "no endpoint: the claim writes no event")
	require.Zero(t, recorded)

	r := hookstest.NewReceiver(t)
	s.endpoint(r, hooks.OpeningFilled, hooks.BookingConfirmed)
	held := s.opening(s.shop, time.Now().Add(25*time.Hour))
	heldBooking := claim(held, "pending_payment")
	require.Equal(t, 1, recorded)
	paid := s.opening(s.shop, time.Now().Add(26*time.Hour))
	paidBooking := claim(paid, "confirmed")
	require.Equal(t, 2, recorded)

	types, subs := s.subjects()
	require.Equal(t, []string{hooks.OpeningFilled, hooks.OpeningFilled, hooks.BookingConfirmed}, types)
	require.Equal(t, held, subs[0].ID)
	require.Equal(t, "filled", subs[0].Status, "the state the claim made")
	require.Equal(t, heldBooking, subs[0].Booking.ID)
	require.Equal(t, "pending_payment", subs[0].Booking.Status)
	require.EqualValues(t, 3500, subs[0].Booking.AmountCents)
	require.Equal(t, "Haircut", subs[0].Booking.Service)
	require.Equal(t, "Bea", subs[0].FilledBy.Name)
	require.Equal(t, bea.ID, subs[0].FilledBy.CustomerID)
	require.Equal(t, paid, subs[1].ID)
	require.Equal(t, paidBooking, subs[2].Booking.ID)
	require.Equal(t, "confirmed", subs[2].Booking.Status)

	// What the claim recorded is what RecordOpening renders of the rows the claim left.
	require.NoError(t, hooks.RecordOpening(ctx, s.pool, s.shop.ID, hooks.OpeningFilled, time.Now(), held, heldBooking))
	_, subs = s.subjects()
	require.Equal(t, subs[0], subs[3])

	// An endpoint subscribed to booking.confirmed only: the claim records that one alone.
	_, err := s.pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled_events = '{booking.confirmed}'`)
	require.NoError(t, err)
	claim(s.opening(s.shop, time.Now().Add(27*time.Hour)), "pending_payment")
	require.Zero(t, recorded)
	claim(s.opening(s.shop, time.Now().Add(28*time.Hour)), "confirmed")
	require.Equal(t, 1, recorded)
	types, _ = s.subjects()
	require.Equal(t, []string{hooks.OpeningFilled, hooks.OpeningFilled, hooks.BookingConfirmed, hooks.OpeningFilled, hooks.BookingConfirmed}, types)
}
