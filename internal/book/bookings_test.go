package book_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
)

// yes books opening for customer as a YES's claim does (slots' BookingClaim, one
// statement): the opening filled, a booking held for payment of the offer's service (30
// minutes of a "Cut and beard") of the opening's person and start.
func (f fixture) yes(t *testing.T, opening, customer uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.pool.QueryRow(context.Background(), `
		WITH filled AS (
		    UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now(), updated_at = now(), version = version + 1
		    WHERE id = $1 AND status = 'open' RETURNING *
		)
		INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at,
		    service, duration_minutes, staff_id, starts_at, ends_at)
		SELECT f.id, $2, f.shop_id, 'pending_payment', f.price_cents, 'usd', now(), now(),
		    'Cut and beard', 30, f.staff_id, f.starts_at, f.starts_at + interval '30 minutes'
		FROM filled f RETURNING id`, opening, customer).Scan(&id))
	return id
}

// lapse is what the ledger does when a held booking's payment fails or expires: the
// booking payment_failed, its opening open again (slots.Reopen).
func (f fixture) lapse(t *testing.T, booking uuid.UUID) {
	t.Helper()
	_, err := f.pool.Exec(context.Background(), `
		WITH b AS (UPDATE bookings SET status = 'payment_failed', updated_at = now() WHERE id = $1 RETURNING opening_id)
		UPDATE slot_openings SET status = 'open', filled_by = NULL, filled_at = NULL, generation = generation + 1,
		    version = version + 1, updated_at = now()
		WHERE id = (SELECT opening_id FROM b)`, booking)
	require.NoError(t, err)
}

// TestYESBookingsAreInTheBook: a booking a YES made is an appointment of the book,
// source slotrecovery, read from the ledger's own row: booked while held, cancelled once
// it lapsed (which declares nothing: the ledger reopened the opening itself), paged
// with the sources' appointments in one order, and no other shop's.
func TestYESBookingsAreInTheBook(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	ana, err := catalog.New(f.pool, nil).AddStaff(ctx, f.shop.ID, "Ana")
	require.NoError(t, err)
	bea, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550150", Name: "Bea", SMSOptIn: true})
	require.NoError(t, err)
	start := time.Now().Add(72 * time.Hour).Truncate(time.Hour).UTC()
	op, err := f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: start, DurationMinutes: 45, Service: "Cut",
		PriceCents: 2500, StaffID: ana.ID})
	require.NoError(t, err)
	booking := f.yes(t, op.ID, bea.ID)
	// The sources' appointments around it, one at the same start.
	for i, at := range []time.Time{start.Add(-time.Hour), start, start, start.Add(time.Hour)} {
		a := appt(string(rune('a'+i)), 1, connectors.StatusBooked)
		a.StartsAt, a.Phone = at, ""
		_, err := f.book.Upsert(ctx, f.shop, a)
		require.NoError(t, err)
	}

	all, err := f.book.List(ctx, f.shop.ID, book.Query{Limit: book.MaxPage})
	require.NoError(t, err)
	require.Len(t, all.Appointments, 5)
	require.True(t, slices.IsSortedFunc(all.Appointments, func(a, b book.Appointment) int {
		if c := a.StartsAt.Compare(b.StartsAt); c != 0 {
			return c
		}
		return slices.Compare(a.ID[:], b.ID[:])
	}), "by start, then id, across the two sources")
	i := slices.IndexFunc(all.Appointments, func(a book.Appointment) bool { return a.ID == booking })
	require.GreaterOrEqual(t, i, 0)
	listed := all.Appointments[i]
	require.Equal(t, connectors.SourceSlotRecovery, listed.Source)
	require.Nil(t, listed.External)
	require.Equal(t, connectors.StatusBooked, listed.Status)
	require.Equal(t, &book.Customer{ID: bea.ID, Name: "Bea"}, listed.Customer)
	require.Equal(t, "Bea", listed.Name)
	require.Equal(t, &book.Staff{ID: ana.ID, Name: "Ana"}, listed.Staff)
	require.Equal(t, "Cut and beard", listed.Service)
	require.True(t, start.Equal(listed.StartsAt))
	require.Equal(t, 30, listed.DurationMinutes)
	require.EqualValues(t, 2500, listed.PriceCents)
	require.NotEqual(t, "+15555550150", listed.Phone, "masked in a list")
	require.NotEmpty(t, listed.Phone)
	got, err := f.book.Get(ctx, f.shop.ID, booking)
	require.NoError(t, err)
	require.Equal(t, "+15555550150", got.Phone)
	require.Equal(t, connectors.StatusBooked, got.Status)

	// Pages of every size list the same appointments in the same order.
	for size := 1; size <= 4; size++ {
		var paged []book.Appointment
		q := book.Query{Limit: size}
		for {
			p, err := f.book.List(ctx, f.shop.ID, q)
			require.NoError(t, err)
			paged = append(paged, p.Appointments...)
			if p.Next == "" {
				break
			}
			q.Cursor = p.Next
		}
		require.Equal(t, all.Appointments, paged, "pages of %d", size)
	}
	// The filters hold for it too.
	mine, err := f.book.List(ctx, f.shop.ID, book.Query{StaffID: ana.ID})
	require.NoError(t, err)
	require.Len(t, mine.Appointments, 1)
	require.Equal(t, booking, mine.Appointments[0].ID)
	window, err := f.book.List(ctx, f.shop.ID, book.Query{From: start, To: start.Add(time.Minute)})
	require.NoError(t, err)
	require.Len(t, window.Appointments, 3)

	// The book does not cancel the ledger's booking.
	_, err = f.book.Cancel(ctx, f.shop, booking)
	require.ErrorIs(t, err, book.ErrBooking)

	// Its lapse shows it cancelled and declares nothing.
	f.lapse(t, booking)
	got, err = f.book.Get(ctx, f.shop.ID, booking)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, got.Status)
	cancelled, err := f.book.List(ctx, f.shop.ID, book.Query{Status: connectors.StatusCancelled})
	require.NoError(t, err)
	require.Len(t, cancelled.Appointments, 1)
	require.Equal(t, booking, cancelled.Appointments[0].ID)
	n, err := f.book.DeclarePending(ctx, 10)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, f.count(t, `SELECT count(*) FROM appointment_openings`))
	ops := f.openingsOf(t)
	require.Len(t, ops, 1, "only the opening the ledger reopened offers the time")
	require.Equal(t, op.ID, ops[0].ID)
	require.Equal(t, slots.StatusOpen, ops[0].Status)

	// Another shop sees none of it.
	other, _, err := f.shops.Create(ctx, shops.NewShop{Name: "Other", Timezone: "UTC", SMSNumber: "+15550002000",
		Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	theirs, err := f.book.List(ctx, other.ID, book.Query{})
	require.NoError(t, err)
	require.Empty(t, theirs.Appointments)
	_, err = f.book.Get(ctx, other.ID, booking)
	require.ErrorIs(t, err, book.ErrNotFound)
}
