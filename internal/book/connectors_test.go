package book_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
	"github.com/slotrecovery/slotrecovery/internal/connectors/ics"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
)

// vendorFixture is an adapter's test payload with its days (December 2026) moved to
// days ahead of now, so the appointments stay in the future whenever the test runs.
func vendorFixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, 2+n).Format("2006-01-02") }
	return []byte(strings.NewReplacer("2026-12-01", day(1), "2026-12-02", day(2), "2026-12-03", day(3)).Replace(string(b)))
}

// deliver hands the book a delivery's appointments in order, as a handler will once it
// has verified and read it.
func deliver(t *testing.T, f fixture, d connectors.Delivery) []book.Result {
	t.Helper()
	var out []book.Result
	for _, a := range d.Appointments {
		res, err := f.book.Upsert(context.Background(), f.shop, a)
		require.NoError(t, err)
		out = append(out, res)
	}
	return out
}

// TestCalcomDeliveriesThroughTheBook: cal.com's signed deliveries, redelivered and out of
// order, make one booked-then-cancelled appointment of the known customer, and one opening
// of its time, service and price.
func TestCalcomDeliveriesThroughTheBook(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	kim, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550123", Name: "Kim", SMSOptIn: true})
	require.NoError(t, err)
	const secret = "cal-connector-secret"
	created := vendorFixture(t, "../connectors/calcom/testdata/booking_created.json")
	cancelled := vendorFixture(t, "../connectors/calcom/testdata/booking_cancelled.json")
	read := func(body []byte) connectors.Delivery {
		d, err := calcom.Read(secret, body, calcom.Sign(secret, body))
		require.NoError(t, err)
		return d
	}

	first := deliver(t, f, read(created))
	require.Equal(t, connectors.StatusBooked, first[0].Appointment.Status)
	require.Equal(t, kim.ID, first[0].Appointment.Customer.ID)
	for range 2 {
		deliver(t, f, read(cancelled))
	}
	late := deliver(t, f, read(created))
	require.False(t, late[0].Changed, "a late BOOKING_CREATED does not book it again")

	a, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceCalcom, "bFJeNb2uX8ANpT3JL5EfXw")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, a.Status)
	ops := f.openingsOf(t)
	require.Len(t, ops, 1)
	require.True(t, ops[0].StartsAt.Equal(a.StartsAt))
	require.Equal(t, 45, ops[0].DurationMinutes)
	require.Equal(t, "Haircut", ops[0].Service)
	require.EqualValues(t, 2500, ops[0].PriceCents)

	_, err = calcom.Read(secret, cancelled, calcom.Sign("another", cancelled))
	require.ErrorIs(t, err, connectors.ErrSignature)
}

// TestSquareDeliveriesThroughTheBook: Square's versions, delivered newest first and then
// again in order, leave the booking cancelled at its moved time, with one opening there
// (a shop with services: each customer is offered their own).
func TestSquareDeliveriesThroughTheBook(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := catalog.New(f.pool, nil).AddService(ctx, f.shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	const key, url = "sq-signature-key", "https://slots.example.test/webhooks/square/1"
	read := func(name string) connectors.Delivery {
		body := vendorFixture(t, "../connectors/square/testdata/"+name)
		d, err := square.Read(key, url, body, square.Sign(key, url, body))
		require.NoError(t, err)
		return d
	}
	for _, name := range []string{"booking_updated_cancelled.json", "booking_created.json", "booking_updated_moved.json",
		"booking_updated_cancelled.json", "payment_updated.json"} {
		deliver(t, f, read(name))
	}
	a, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceSquare, "z4r1xkq9b2m7np")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, a.Status)
	require.EqualValues(t, 2, a.Version)
	require.Equal(t, 1, a.Releases)
	ops := f.openingsOf(t)
	require.Len(t, ops, 1)
	require.True(t, ops[0].StartsAt.Equal(a.StartsAt))
	require.Equal(t, 18, a.StartsAt.Hour(), "the moved time")
	require.Empty(t, ops[0].Service)
}

// TestCalendarFeedThroughTheBook: the feed's fixture (moved to a month ahead), read in
// the shop's zone and applied as one snapshot: a deleted instance of a series (EXDATE),
// a cancelled instance (RECURRENCE-ID) and a cancelled one-off each free their time; the
// booked events hold theirs.
func TestCalendarFeedThroughTheBook(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := catalog.New(f.pool, nil).AddService(ctx, f.shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	month := time.Now().UTC().AddDate(0, 2, 0)
	if month.Month() == time.February {
		month = month.AddDate(0, 1, 0) // the fixture's days run to the 29th
	}
	b, err := os.ReadFile("../connectors/ics/testdata/feed.ics")
	require.NoError(t, err)
	body := strings.ReplaceAll(string(b), "202612", month.Format("200601"))
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	feed, err := ics.Parse(strings.NewReader(body), ny)
	require.NoError(t, err)

	res, err := f.book.Snapshot(ctx, f.shop, connectors.SourceICS, feed.Appointments, time.Now())
	require.NoError(t, err)
	require.Equal(t, len(feed.Appointments), res.Changed)
	declared := 0
	for _, d := range res.Declarations {
		if d.State == book.DeclarationDeclared {
			declared++
		}
	}
	require.Equal(t, 3, declared, "the deleted instance, the cancelled instance, the cancelled one-off")
	require.Len(t, f.openingsOf(t), 3)

	page, err := f.book.List(ctx, f.shop.ID, book.Query{Status: connectors.StatusBooked})
	require.NoError(t, err)
	require.Len(t, page.Appointments, 3, "the one-off, the moved instance, the Outlook event")
}
