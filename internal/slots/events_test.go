package slots_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// subscribe gives shopID an endpoint subscribed to events (every type when none).
func subscribe(t *testing.T, pool *pgxpool.Pool, shopID uuid.UUID, events ...string) {
	t.Helper()
	if len(events) == 0 {
		events = []string{hooks.AllTypes}
	}
	_, err := pool.Exec(context.Background(), `INSERT INTO webhook_endpoints (shop_id, url, enabled_events, secret, created_at, updated_at)
		VALUES ($1, 'https://crm.example.com/hooks', $2, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', now(), now())`, shopID, events)
	require.NoError(t, err)
}

// eventsOf lists the types of the events recorded for shopID, in order, and the
// opening and booking states each recorded.
func eventsOf(t *testing.T, pool *pgxpool.Pool, shopID uuid.UUID) (types, states []string) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT type, subject FROM webhook_events WHERE shop_id = $1 ORDER BY seq`, shopID)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var typ string
		var raw []byte
		require.NoError(t, rows.Scan(&typ, &raw))
		s, err := hooks.DecodeOpening(raw)
		require.NoError(t, err)
		state := s.Status
		if s.Booking != nil {
			state += "/" + s.Booking.Status
		}
		types, states = append(types, typ), append(states, state)
	}
	require.NoError(t, rows.Err())
	return types, states
}

// TestOpeningChangesRecordTheirEvents: declaring, the YES's claim, cancelling and the
// wave's expiry each record their event with the change (the claim in its own
// statement: opening.filled, and booking.confirmed for a shop without payments); doing
// it again changes nothing and records nothing.
func TestOpeningChangesRecordTheirEvents(t *testing.T) {
	t.Parallel()
	svc, f := setup(t, 2, noLock{}, "")
	ctx := context.Background()
	subscribe(t, f.pool, f.shop.ID)

	declared, err := svc.Declare(ctx, f.shop, slots.NewOpening{StartsAt: time.Now().Add(6 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
	require.NoError(t, err)
	claim, err := svc.Book(ctx, &f.shop, f.cust[0])
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome)
	again, err := svc.Book(ctx, &f.shop, f.cust[1])
	require.NoError(t, err)
	require.Equal(t, slots.Taken, again.Outcome)
	_, err = svc.Cancel(ctx, f.shop.ID, declared.ID)
	require.NoError(t, err)
	_, err = svc.Cancel(ctx, f.shop.ID, declared.ID)
	require.NoError(t, err, "cancelling twice is harmless")
	late, err := svc.Declare(ctx, f.shop, slots.NewOpening{StartsAt: time.Now().Add(7 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
	require.NoError(t, err)
	require.NoError(t, svc.Expire(ctx, late.ID, time.Now()))
	require.NoError(t, svc.Expire(ctx, late.ID, time.Now()), "the chain's next wave finds it expired")
	require.NoError(t, svc.Expire(ctx, f.op.ID, time.Now()), "a filled opening is not expired")

	types, states := eventsOf(t, f.pool, f.shop.ID)
	require.Equal(t, []string{hooks.OpeningDeclared, hooks.OpeningFilled, hooks.BookingConfirmed, hooks.OpeningCancelled,
		hooks.OpeningDeclared, hooks.OpeningExpired}, types)
	require.Equal(t, []string{"open", "filled/confirmed", "filled/confirmed", "cancelled", "open", "expired"}, states)
	var filledOpening string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT subject ->> 'id' FROM webhook_events WHERE type = $1`, hooks.OpeningFilled).Scan(&filledOpening))
	require.Equal(t, f.op.ID.String(), filledOpening)
}

// TestClaimRecordsOnlyWhatIsSubscribed: a checkout shop's YES records opening.filled
// alone (the booking is pending); an endpoint subscribed to other types, or none, makes
// the claim record nothing.
func TestClaimRecordsOnlyWhatIsSubscribed(t *testing.T) {
	t.Parallel()
	svc, f := setup(t, 0, noLock{}, "")
	ctx := context.Background()
	shop, _, err := shops.New(f.pool, shops.Config{PaymentsEnabled: true}).Create(ctx, shops.NewShop{Name: "Paid", Timezone: "UTC", SMSNumber: "+15550001001",
		Currency: "usd", PaymentMode: shops.PaymentCheckout})
	require.NoError(t, err)
	offer := func(phone string) (slots.Opening, uuid.UUID) {
		op, err := svc.Declare(ctx, shop, slots.NewOpening{StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
		require.NoError(t, err)
		c, err := f.customers.Add(ctx, shop.ID, customers.NewCustomer{Phone: phone, SMSOptIn: true})
		require.NoError(t, err)
		_, err = f.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), now())`, op.ID, c.ID, shop.ID)
		require.NoError(t, err)
		return op, c.ID
	}
	book := func(c uuid.UUID) {
		claim, err := svc.Book(ctx, &shop, c)
		require.NoError(t, err)
		require.Equal(t, slots.Booked, claim.Outcome)
	}
	_, c := offer("+15551000001")
	book(c)
	types, _ := eventsOf(t, f.pool, shop.ID)
	require.Empty(t, types, "no endpoint: nothing recorded")

	subscribe(t, f.pool, shop.ID, hooks.BookingConfirmed, hooks.OpeningCancelled)
	_, c = offer("+15551000002")
	book(c)
	types, _ = eventsOf(t, f.pool, shop.ID)
	require.Empty(t, types, "not subscribed to opening.filled")

	subscribe(t, f.pool, shop.ID, hooks.OpeningFilled)
	op, c := offer("+15551000003")
	book(c)
	types, states := eventsOf(t, f.pool, shop.ID)
	require.Equal(t, []string{hooks.OpeningFilled}, types)
	require.Equal(t, []string{"filled/pending_payment"}, states)
	var id string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT subject ->> 'id' FROM webhook_events`).Scan(&id))
	require.Equal(t, op.ID.String(), id)
}
