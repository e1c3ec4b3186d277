package book_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// noLock and noCooldown stand in for Redis: declaring an opening takes neither.
type noLock struct{}

func (noLock) TryLock(context.Context, string, time.Duration) (func(string), error) {
	return func(string) {}, nil
}
func (noLock) Watch(string) (<-chan string, func()) { return nil, func() {} }
func (noLock) Recent(string) []string               { return nil }

type noCooldown struct{}

func (noCooldown) Start(context.Context, string, time.Duration) error { return nil }

type fixture struct {
	pool     *pgxpool.Pool
	shops    *shops.Service
	openings *slots.Service
	book     *book.Service
	shop     shops.Shop
}

// setup makes a payment-free shop (number +15550001000, lead time one hour) without
// services, and the book over it.
func setup(t *testing.T) fixture {
	t.Helper()
	pool, _ := pgtest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	shopsSvc := shops.New(pool, shops.Config{})
	openings := slots.New(pool, queue, noLock{}, noCooldown{}, slots.Config{})
	shop, _, err := shopsSvc.Create(context.Background(), shops.NewShop{Name: "Book", Timezone: "UTC",
		SMSNumber: "+15550001000", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.True(t, shop.AutoDeclare, "auto_declare is on by default")
	return fixture{pool: pool, shops: shopsSvc, openings: openings, shop: shop,
		book: book.New(pool, shopsSvc, openings, book.Config{StaleAfter: time.Minute})}
}

// appt is a booked appointment in two days, 45 minutes of a Cut at 25.00.
func appt(id string, version int64, status connectors.Status) connectors.Appointment {
	return connectors.Appointment{
		Source: connectors.SourceSquare, ExternalID: id, Status: status,
		StartsAt: time.Now().Add(48 * time.Hour).Truncate(time.Hour), DurationMinutes: 45,
		Service: "Cut", PriceCents: 2500, Phone: "(555) 555-0123", CustomerName: "Kim",
		Version: version, UpdatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(version) * time.Minute),
	}
}

func (f fixture) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func (f fixture) openingsOf(t *testing.T) []slots.Opening {
	t.Helper()
	ops, err := f.openings.List(context.Background(), f.shop.ID, "", 100)
	require.NoError(t, err)
	return ops
}

func TestUpsertMatchesKnownCustomerAndCreatesNone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	kim, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550123", Name: "Kim L", SMSOptIn: true})
	require.NoError(t, err)

	res, err := f.book.Upsert(ctx, f.shop, appt("sq-1", 1, connectors.StatusBooked))
	require.NoError(t, err)
	require.True(t, res.Changed)
	a := res.Appointment
	require.Equal(t, "+15555550123", a.Phone, "a national number is read in the shop's country")
	require.Equal(t, &book.Customer{ID: kim.ID, Name: "Kim L"}, a.Customer)
	require.Equal(t, &book.External{Source: connectors.SourceSquare, ID: "sq-1"}, a.External)
	require.Equal(t, connectors.StatusBooked, a.Status)
	require.Equal(t, "Kim", a.Name)
	require.Nil(t, res.Declaration)

	stranger := appt("sq-2", 1, connectors.StatusBooked)
	stranger.Phone = "+44 7700 900123"
	res, err = f.book.Upsert(ctx, f.shop, stranger)
	require.NoError(t, err)
	require.Nil(t, res.Appointment.Customer)
	require.Equal(t, "+447700900123", res.Appointment.Phone)

	garbled := appt("sq-3", 1, connectors.StatusCancelled)
	garbled.Phone = "call the front desk"
	res, err = f.book.Upsert(ctx, f.shop, garbled)
	require.NoError(t, err)
	require.Empty(t, res.Appointment.Phone, "an unreadable number is left out, not refused")
	require.NotNil(t, res.Declaration, "an appointment without a customer still frees its time")

	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM customers WHERE shop_id = $1`, f.shop.ID),
		"an appointment never creates a customer")
}

func TestUpsertRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := setup(t)
	otherShop, _, err := f.shops.Create(context.Background(), shops.NewShop{Name: "Other", Timezone: "UTC",
		SMSNumber: "+15550009999", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	theirs, err := catalog.New(f.pool, nil).AddStaff(context.Background(), otherShop.ID, "Lou")
	require.NoError(t, err)
	cases := []struct {
		name  string
		field string
		edit  func(*connectors.Appointment)
	}{
		{"no source", "source", func(a *connectors.Appointment) { a.Source = "" }},
		{"the book's own source", "source", func(a *connectors.Appointment) { a.Source = connectors.SourceSlotRecovery }},
		{"no external id", "external_id", func(a *connectors.Appointment) { a.ExternalID = " " }},
		{"unknown status", "status", func(a *connectors.Appointment) { a.Status = "CANCELLED_BY_SELLER" }},
		{"no start", "starts_at", func(a *connectors.Appointment) { a.StartsAt = time.Time{} }},
		{"no length", "duration_minutes", func(a *connectors.Appointment) { a.DurationMinutes = 0 }},
		{"a day and more", "duration_minutes", func(a *connectors.Appointment) { a.DurationMinutes = 1441 }},
		{"negative price", "price_cents", func(a *connectors.Appointment) { a.PriceCents = -1 }},
		{"negative version", "version", func(a *connectors.Appointment) { a.Version = -1 }},
		{"another shop's person", "staff_id", func(a *connectors.Appointment) { a.StaffID = theirs.ID }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := appt("bad", 1, connectors.StatusBooked)
			c.edit(&in)
			_, err := f.book.Upsert(context.Background(), f.shop, in)
			p, ok := problem.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, problem.Invalid, p.Kind)
			require.Equal(t, c.field, p.Field)
		})
	}
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM appointments`))
}

// TestOlderDescriptionsChangeNothing: by version, then by updated_at, a description no
// newer than the stored one changes nothing; a late booked never resurrects a
// cancelled appointment.
func TestOlderDescriptionsChangeNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := f.book.Upsert(ctx, f.shop, appt("sq-1", 1, connectors.StatusBooked))
	require.NoError(t, err)
	res, err := f.book.Upsert(ctx, f.shop, appt("sq-1", 3, connectors.StatusCancelled))
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Equal(t, connectors.StatusCancelled, res.Appointment.Status)

	for _, late := range []connectors.Appointment{
		appt("sq-1", 2, connectors.StatusBooked), // older version, later in time
		appt("sq-1", 3, connectors.StatusCancelled),
		appt("sq-1", 1, connectors.StatusBooked),
	} {
		res, err := f.book.Upsert(ctx, f.shop, late)
		require.NoError(t, err)
		require.False(t, res.Changed, "version %d", late.Version)
		require.Equal(t, connectors.StatusCancelled, res.Appointment.Status)
		require.EqualValues(t, 3, res.Appointment.Version)
		require.Nil(t, res.Declaration)
	}

	// Without versions, updated_at orders.
	at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	cal := appt("cal-1", 0, connectors.StatusCancelled)
	cal.Source, cal.UpdatedAt = connectors.SourceCalcom, at
	cal.StartsAt = cal.StartsAt.Add(2 * time.Hour) // not sq-1's time, which is open now
	_, err = f.book.Upsert(ctx, f.shop, cal)
	require.NoError(t, err)
	cal.Status, cal.UpdatedAt = connectors.StatusBooked, at.Add(-time.Second)
	res, err = f.book.Upsert(ctx, f.shop, cal)
	require.NoError(t, err)
	require.False(t, res.Changed)
	require.Equal(t, connectors.StatusCancelled, res.Appointment.Status)
	cal.UpdatedAt = at.Add(time.Second)
	res, err = f.book.Upsert(ctx, f.shop, cal)
	require.NoError(t, err)
	require.True(t, res.Changed, "a newer booked books it again")
	require.Equal(t, connectors.StatusBooked, res.Appointment.Status)

	require.Len(t, f.openingsOf(t), 2, "one opening per cancellation: sq-1 and cal-1")
}

// TestDeliveryStorm: many goroutines deliver every version of one appointment, each
// several times and in random orders, at once. Postgres orders them: the newest wins,
// each release claims one declaration, and the shop gets exactly one opening (a second
// release finds the time already open).
func TestDeliveryStorm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		statuses []connectors.Status
	}{
		{"booked then cancelled", []connectors.Status{connectors.StatusBooked, connectors.StatusBooked, connectors.StatusCancelled}},
		{"cancelled, booked again, cancelled", []connectors.Status{connectors.StatusBooked, connectors.StatusCancelled,
			connectors.StatusBooked, connectors.StatusCancelled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			ctx := context.Background()
			var versions []connectors.Appointment
			for i, st := range tc.statuses {
				versions = append(versions, appt("storm", int64(i+1), st))
			}
			const goroutines, rounds = 16, 3
			var wg sync.WaitGroup
			errs := make(chan error, goroutines*rounds*len(versions))
			for g := range goroutines {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 7))
					for range rounds {
						for _, i := range r.Perm(len(versions)) {
							if _, err := f.book.Upsert(ctx, f.shop, versions[i]); err != nil {
								errs <- err
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			a, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceSquare, "storm")
			require.NoError(t, err)
			require.Equal(t, connectors.StatusCancelled, a.Status)
			require.EqualValues(t, len(versions), a.Version)
			require.GreaterOrEqual(t, a.Releases, 1)
			ds, err := f.book.Declarations(ctx, f.shop.ID, a.ID)
			require.NoError(t, err)
			require.Len(t, ds, a.Releases, "one claim per release")
			declared := map[uuid.UUID]bool{}
			for _, d := range ds {
				require.Contains(t, []book.DeclarationState{book.DeclarationDeclared, book.DeclarationSkipped}, d.State)
				if d.State == book.DeclarationDeclared {
					require.False(t, declared[d.OpeningID], "a release declares its own opening")
					declared[d.OpeningID] = true
				} else {
					// Declared by an earlier release, or booked again before this one's turn.
					require.Contains(t, []string{book.SkipAlreadyOpen, book.SkipBookedAgain, book.SkipSuperseded}, d.Reason)
				}
			}
			// Exactly one opening offers the time whatever the redeliveries; an earlier
			// release's opening exists only if the appointment was booked again over it
			// in between, which withdrew it.
			open := 0
			ops := f.openingsOf(t)
			require.Len(t, ops, len(declared), "no opening but the claims' own")
			for _, op := range ops {
				require.True(t, declared[op.ID])
				if op.Status == slots.StatusOpen {
					open++
				} else {
					require.Equal(t, slots.StatusCancelled, op.Status, "withdrawn")
				}
			}
			require.Equal(t, 1, open)
		})
	}
}

func TestCancelledFutureAppointmentDeclaresItsOpening(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	kim, err := catalog.New(f.pool, nil).AddStaff(ctx, f.shop.ID, "Kim")
	require.NoError(t, err)
	in := appt("sq-1", 1, connectors.StatusBooked)
	in.StaffID = kim.ID
	_, err = f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	in.Version, in.Status = 2, connectors.StatusCancelled
	res, err := f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	require.NotNil(t, res.Declaration)
	d := *res.Declaration
	require.Equal(t, book.DeclarationDeclared, d.State)
	require.Equal(t, 1, d.Release)
	require.Equal(t, res.Appointment.ID, d.AppointmentID)

	op, err := f.openings.Get(ctx, f.shop.ID, d.OpeningID)
	require.NoError(t, err)
	require.Equal(t, slots.StatusOpen, op.Status)
	require.True(t, op.StartsAt.Equal(in.StartsAt))
	require.Equal(t, 45, op.DurationMinutes)
	require.Equal(t, "Cut", op.Service)
	require.EqualValues(t, 2500, op.PriceCents)
	require.Equal(t, kim.ID, op.StaffID)
	require.Equal(t, &book.Staff{ID: kim.ID, Name: "Kim"}, res.Appointment.Staff)

	got, err := f.book.Declarations(ctx, f.shop.ID, res.Appointment.ID)
	require.NoError(t, err)
	require.Equal(t, []book.Declaration{d}, got)
}

// TestShopWithServicesOffersItsOwn: in a shop with services, the appointment's service
// is offered when it is one of them; else each customer's own.
func TestShopWithServicesOffersItsOwn(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := catalog.New(f.pool, nil).AddService(ctx, f.shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	in := appt("known", 1, connectors.StatusCancelled)
	in.Service, in.PriceCents = "cut", 0
	res, err := f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	op, err := f.openings.Get(ctx, f.shop.ID, res.Declaration.OpeningID)
	require.NoError(t, err)
	require.Equal(t, "Cut", op.Service)
	require.EqualValues(t, 3000, op.PriceCents)

	other := appt("unknown", 1, connectors.StatusCancelled)
	other.Service, other.StartsAt = "30 Min Meeting between Ann and Kim", in.StartsAt.Add(3*time.Hour)
	res, err = f.book.Upsert(ctx, f.shop, other)
	require.NoError(t, err)
	require.Equal(t, book.DeclarationDeclared, res.Declaration.State)
	op, err = f.openings.Get(ctx, f.shop.ID, res.Declaration.OpeningID)
	require.NoError(t, err)
	require.Empty(t, op.Service, "each customer is offered their own service that fits")
}

func TestDeclarationSkips(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	soon := time.Now().Add(30 * time.Minute).Truncate(time.Second) // inside the hour of lead time

	inside := appt("inside", 1, connectors.StatusCancelled)
	inside.StartsAt = soon
	res, err := f.book.Upsert(ctx, f.shop, inside)
	require.NoError(t, err)
	require.Equal(t, book.DeclarationSkipped, res.Declaration.State)
	require.Equal(t, book.SkipPastCutoff, res.Declaration.Reason)

	past := appt("past", 1, connectors.StatusCancelled)
	past.StartsAt = time.Now().Add(-time.Hour)
	res, err = f.book.Upsert(ctx, f.shop, past)
	require.NoError(t, err)
	require.Nil(t, res.Declaration, "a past appointment frees nothing")

	at := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
	_, err = f.openings.Declare(ctx, f.shop, slots.NewOpening{StartsAt: at, DurationMinutes: 30, Service: "Cut", PriceCents: 1000})
	require.NoError(t, err)
	open := appt("open", 1, connectors.StatusCancelled)
	open.StartsAt = at
	res, err = f.book.Upsert(ctx, f.shop, open)
	require.NoError(t, err)
	require.Equal(t, book.SkipAlreadyOpen, res.Declaration.Reason)

	again := appt("again", 1, connectors.StatusBooked)
	again.StartsAt = at.Add(24 * time.Hour)
	_, err = f.book.Upsert(ctx, f.shop, again)
	require.NoError(t, err)
	gone := appt("gone", 1, connectors.StatusCancelled)
	gone.StartsAt = again.StartsAt
	res, err = f.book.Upsert(ctx, f.shop, gone)
	require.NoError(t, err)
	require.Equal(t, book.SkipBookedAgain, res.Declaration.Reason)

	free := appt("free", 1, connectors.StatusCancelled)
	free.StartsAt, free.PriceCents = at.Add(48*time.Hour), 0
	res, err = f.book.Upsert(ctx, f.shop, free)
	require.NoError(t, err)
	require.Equal(t, book.SkipNoPrice, res.Declaration.Reason, "a shop without services needs a price")

	require.Len(t, f.openingsOf(t), 1, "only the one declared by hand")
}

func TestAutoDeclareOffAndOffer(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	off := false
	shop, err := f.shops.Update(ctx, f.shop.ID, shops.ShopChange{AutoDeclare: &off})
	require.NoError(t, err)
	require.False(t, shop.AutoDeclare)
	again, err := f.shops.Get(ctx, f.shop.ID)
	require.NoError(t, err)
	require.False(t, again.AutoDeclare, "stored")

	res, err := f.book.Upsert(ctx, shop, appt("sq-1", 1, connectors.StatusCancelled))
	require.NoError(t, err)
	require.Equal(t, book.DeclarationWaiting, res.Declaration.State, "recorded for the owner to offer")
	require.True(t, res.Declaration.StartsAt.Equal(res.Appointment.StartsAt))
	require.Empty(t, f.openingsOf(t))
	n, err := f.book.DeclarePending(ctx, 10)
	require.NoError(t, err)
	require.Zero(t, n, "a waiting claim is the owner's to offer")

	var first book.Declaration
	for i := range 3 {
		d, err := f.book.Offer(ctx, shop, res.Appointment.ID)
		require.NoError(t, err)
		require.Equal(t, book.DeclarationDeclared, d.State)
		if i == 0 {
			first = d
		}
		require.Equal(t, first.OpeningID, d.OpeningID, "offering twice declares once")
	}
	require.Len(t, f.openingsOf(t), 1)

	booked, err := f.book.Upsert(ctx, shop, appt("sq-2", 1, connectors.StatusBooked))
	require.NoError(t, err)
	_, err = f.book.Offer(ctx, shop, booked.Appointment.ID)
	p, ok := problem.As(err)
	require.True(t, ok)
	require.Equal(t, problem.Conflict, p.Kind)
	_, err = f.book.Offer(ctx, shop, uuid.New())
	require.ErrorIs(t, err, book.ErrNotFound)
}

func TestOwnerCancel(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	res, err := f.book.Upsert(ctx, f.shop, appt("sq-1", 4, connectors.StatusBooked))
	require.NoError(t, err)
	id := res.Appointment.ID

	res, err = f.book.Cancel(ctx, f.shop, id)
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Equal(t, connectors.StatusCancelled, res.Appointment.Status)
	require.Equal(t, book.DeclarationDeclared, res.Declaration.State)

	res, err = f.book.Cancel(ctx, f.shop, id)
	require.NoError(t, err)
	require.False(t, res.Changed, "cancelling twice is harmless")
	require.Nil(t, res.Declaration)

	// The source's redelivery of the version the owner cancelled changes nothing; its
	// next version does.
	res, err = f.book.Upsert(ctx, f.shop, appt("sq-1", 4, connectors.StatusBooked))
	require.NoError(t, err)
	require.False(t, res.Changed)
	require.Equal(t, connectors.StatusCancelled, res.Appointment.Status)

	done, err := f.book.Upsert(ctx, f.shop, appt("sq-2", 1, connectors.StatusCompleted))
	require.NoError(t, err)
	_, err = f.book.Cancel(ctx, f.shop, done.Appointment.ID)
	require.ErrorIs(t, err, book.ErrNotBooked)
	_, err = f.book.Cancel(ctx, f.shop, uuid.New())
	require.ErrorIs(t, err, book.ErrNotFound)

	other, _, err := f.shops.Create(ctx, shops.NewShop{Name: "Other", Timezone: "UTC", SMSNumber: "+15550002000",
		Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	_, err = f.book.Cancel(ctx, other, id)
	require.ErrorIs(t, err, book.ErrNotFound, "another shop's appointment is not found")
	require.Len(t, f.openingsOf(t), 1)
}

func TestListPages(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	base := time.Now().Add(24 * time.Hour).Truncate(time.Hour)
	for i := range 5 {
		in := appt(fmt.Sprintf("a%d", i), 1, connectors.StatusBooked)
		in.StartsAt = base.Add(time.Duration(4-i) * time.Hour)
		if i == 4 {
			in.Status = connectors.StatusCompleted
		}
		_, err := f.book.Upsert(ctx, f.shop, in)
		require.NoError(t, err)
	}
	var got []string
	q := book.Query{Limit: 2}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		page, err := f.book.List(ctx, f.shop.ID, q)
		require.NoError(t, err)
		for _, a := range page.Appointments {
			got = append(got, a.External.ID)
			require.Equal(t, "+155******23", a.Phone, "lists mask phones")
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	require.Equal(t, []string{"a4", "a3", "a2", "a1", "a0"}, got, "by start")

	page, err := f.book.List(ctx, f.shop.ID, book.Query{Status: connectors.StatusBooked, From: base.Add(time.Hour), To: base.Add(3 * time.Hour)})
	require.NoError(t, err)
	require.Len(t, page.Appointments, 2)
	require.Equal(t, "a3", page.Appointments[0].External.ID)
	require.Empty(t, page.Next)

	full, err := f.book.Get(ctx, f.shop.ID, page.Appointments[0].ID)
	require.NoError(t, err)
	require.Equal(t, "+15555550123", full.Phone, "Get shows the number")

	for _, q := range []book.Query{{Cursor: "nope"}, {Limit: book.MaxPage + 1}, {Status: "gone"}, {From: base, To: base}} {
		_, err := f.book.List(ctx, f.shop.ID, q)
		p, ok := problem.As(err)
		require.True(t, ok, "%+v: %v", q, err)
		require.Equal(t, problem.Invalid, p.Kind)
	}
}

// TestDeclarePendingTakesOverLeftClaims: a claim whose process died before declaring
// is declared by the sweep; one whose process died after declaring but before
// recording it finds the time open and declares nothing twice.
func TestDeclarePendingTakesOverLeftClaims(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	// Died after declaring: the claim still says declaring, long ago, without its opening.
	res, err := f.book.Upsert(ctx, f.shop, appt("after", 1, connectors.StatusCancelled))
	require.NoError(t, err)
	require.Equal(t, book.DeclarationDeclared, res.Declaration.State)
	_, err = f.pool.Exec(ctx, `UPDATE appointment_openings SET state = 'declaring', opening_id = NULL,
		attempted_at = now() - interval '10 minutes' WHERE appointment_id = $1`, res.Appointment.ID)
	require.NoError(t, err)

	// Died before declaring: a claim made, never tried (scene set with SQL from a
	// waiting one).
	before := appt("before", 1, connectors.StatusCancelled)
	before.StartsAt = before.StartsAt.Add(5 * time.Hour)
	_, err = f.pool.Exec(ctx, `UPDATE shops SET auto_declare = false WHERE id = $1`, f.shop.ID)
	require.NoError(t, err)
	shop, err := f.shops.Get(ctx, f.shop.ID)
	require.NoError(t, err)
	res2, err := f.book.Upsert(ctx, shop, before)
	require.NoError(t, err)
	require.Equal(t, book.DeclarationWaiting, res2.Declaration.State)
	_, err = f.pool.Exec(ctx, `UPDATE appointment_openings SET state = 'pending' WHERE appointment_id = $1`, res2.Appointment.ID)
	require.NoError(t, err)

	// A recent attempt is someone else's, running now: left alone.
	n, err := f.book.DeclarePending(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = f.book.DeclarePending(ctx, 10)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left")

	ds, err := f.book.Declarations(ctx, f.shop.ID, res.Appointment.ID)
	require.NoError(t, err)
	require.Equal(t, book.DeclarationSkipped, ds[0].State)
	require.Equal(t, book.SkipAlreadyOpen, ds[0].Reason)
	ds, err = f.book.Declarations(ctx, f.shop.ID, res2.Appointment.ID)
	require.NoError(t, err)
	require.Equal(t, book.DeclarationDeclared, ds[0].State)
	require.Len(t, f.openingsOf(t), 2)
}

// TestRescheduleFreesTheOriginalTime: a source's reschedule is the new booking booked
// and the original moved (connectors/calcom reads BOOKING_RESCHEDULED so); the
// original's time declares its opening, the new one's holds.
func TestRescheduleFreesTheOriginalTime(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	orig := appt("orig", 0, connectors.StatusBooked)
	orig.Source, orig.UpdatedAt = connectors.SourceCalcom, time.Now().Add(-time.Hour)
	_, err := f.book.Upsert(ctx, f.shop, orig)
	require.NoError(t, err)

	moved := orig
	moved.Status, moved.UpdatedAt = connectors.StatusMoved, time.Now()
	rebooked := moved
	rebooked.ExternalID, rebooked.Status, rebooked.StartsAt = "new", connectors.StatusBooked, orig.StartsAt.Add(24*time.Hour)
	for _, a := range []connectors.Appointment{rebooked, moved} {
		_, err := f.book.Upsert(ctx, f.shop, a)
		require.NoError(t, err)
	}
	got, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceCalcom, "orig")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusMoved, got.Status)
	ops := f.openingsOf(t)
	require.Len(t, ops, 1)
	require.True(t, ops[0].StartsAt.Equal(orig.StartsAt), "the original time is offered, not the new one")
}

// TestForget: an erased customer's appointments keep their times and lose who; others'
// stay as they are.
func TestForget(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	kim, err := customertest.New(t, f.pool).Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550123", Name: "Kim", SMSOptIn: true})
	require.NoError(t, err)
	mine, err := f.book.Upsert(ctx, f.shop, appt("mine", 1, connectors.StatusBooked))
	require.NoError(t, err)
	require.NotNil(t, mine.Appointment.Customer)
	unlinked := appt("unlinked", 1, connectors.StatusBooked)
	unlinked.StartsAt = unlinked.StartsAt.Add(time.Hour)
	_, err = f.pool.Exec(ctx, `UPDATE customers SET phone = '+15555550999' WHERE id = $1`, kim.ID) // matched before, by number only now
	require.NoError(t, err)
	before, err := f.book.Upsert(ctx, f.shop, unlinked)
	require.NoError(t, err)
	require.Nil(t, before.Appointment.Customer)
	other := appt("other", 1, connectors.StatusBooked)
	other.Phone, other.CustomerName, other.StartsAt = "+15555550177", "Lou", other.StartsAt.Add(2*time.Hour)
	_, err = f.book.Upsert(ctx, f.shop, other)
	require.NoError(t, err)

	n, err := book.Forget(ctx, f.pool, f.shop.ID, kim.ID, "+15555550123", time.Now())
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	for _, id := range []string{"mine", "unlinked"} {
		a, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceSquare, id)
		require.NoError(t, err)
		require.Nil(t, a.Customer, id)
		require.Empty(t, a.Phone, id)
		require.Empty(t, a.Name, id)
		require.Equal(t, connectors.StatusBooked, a.Status, "the time stays")
	}
	lou, err := f.book.GetExternal(ctx, f.shop.ID, connectors.SourceSquare, "other")
	require.NoError(t, err)
	require.Equal(t, "+15555550177", lou.Phone)
	require.Equal(t, "Lou", lou.Name)
}

// TestBookedAgainWithdrawsTheOpening: a cancellation undone in the source (booked again
// over the same time) cancels the opening its release declared while it is open; booked
// again at another time, the freed time stays offered.
func TestBookedAgainWithdrawsTheOpening(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	_, err := f.book.Upsert(ctx, f.shop, appt("undo", 1, connectors.StatusBooked))
	require.NoError(t, err)
	cancelled, err := f.book.Upsert(ctx, f.shop, appt("undo", 2, connectors.StatusCancelled))
	require.NoError(t, err)
	opening := cancelled.Declaration.OpeningID
	again, err := f.book.Upsert(ctx, f.shop, appt("undo", 3, connectors.StatusBooked))
	require.NoError(t, err)
	require.Equal(t, opening, again.Withdrawn)
	op, err := f.openings.Get(ctx, f.shop.ID, opening)
	require.NoError(t, err)
	require.Equal(t, slots.StatusCancelled, op.Status)
	// Cancelled again: the time is free again, and its new release declares it anew.
	res, err := f.book.Upsert(ctx, f.shop, appt("undo", 4, connectors.StatusCancelled))
	require.NoError(t, err)
	require.Equal(t, book.DeclarationDeclared, res.Declaration.State)
	require.Equal(t, 2, res.Declaration.Release)
	require.NotEqual(t, opening, res.Declaration.OpeningID)

	elsewhere := appt("elsewhere", 1, connectors.StatusCancelled)
	elsewhere.StartsAt = elsewhere.StartsAt.Add(5 * time.Hour)
	res, err = f.book.Upsert(ctx, f.shop, elsewhere)
	require.NoError(t, err)
	elsewhere.Version, elsewhere.Status, elsewhere.StartsAt = 2, connectors.StatusBooked, elsewhere.StartsAt.Add(24*time.Hour)
	again, err = f.book.Upsert(ctx, f.shop, elsewhere)
	require.NoError(t, err)
	require.Equal(t, uuid.Nil, again.Withdrawn)
	op, err = f.openings.Get(ctx, f.shop.ID, res.Declaration.OpeningID)
	require.NoError(t, err)
	require.Equal(t, slots.StatusOpen, op.Status, "the time it left is still free")
}

// TestMoveFreesTheFormerTime: an appointment booked at another time (a Square booking's
// new start_at, an edited feed event) frees the time it held; moved back, it withdraws
// that time's opening and frees the other. A move that keeps part of the time frees
// nothing to offer.
func TestMoveFreesTheFormerTime(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	kim, err := catalog.New(f.pool, nil).AddStaff(ctx, f.shop.ID, "Kim")
	require.NoError(t, err)
	in := appt("mv", 1, connectors.StatusBooked)
	in.StaffID = kim.ID
	first := in.StartsAt
	_, err = f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)

	in.Version, in.StartsAt = 2, first.Add(24*time.Hour)
	res, err := f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	require.Equal(t, connectors.StatusBooked, res.Appointment.Status)
	require.Equal(t, 1, res.Appointment.Releases)
	require.Equal(t, book.DeclarationDeclared, res.Declaration.State, res.Declaration.Reason)
	require.True(t, res.Declaration.StartsAt.Equal(first), "the former time")
	op, err := f.openings.Get(ctx, f.shop.ID, res.Declaration.OpeningID)
	require.NoError(t, err)
	require.True(t, op.StartsAt.Equal(first))
	require.Equal(t, kim.ID, op.StaffID)
	former := op.ID

	in.Version, in.StartsAt = 3, first // moved back
	res, err = f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	require.Equal(t, former, res.Withdrawn)
	require.Equal(t, book.DeclarationDeclared, res.Declaration.State)
	require.True(t, res.Declaration.StartsAt.Equal(first.Add(24*time.Hour)))
	op, err = f.openings.Get(ctx, f.shop.ID, former)
	require.NoError(t, err)
	require.Equal(t, slots.StatusCancelled, op.Status)

	in.Version, in.StartsAt = 4, first.Add(15*time.Minute) // 45 minutes: overlaps its former time
	res, err = f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	require.Equal(t, book.DeclarationSkipped, res.Declaration.State)
	require.Equal(t, book.SkipBookedAgain, res.Declaration.Reason)

	in.Version = 5 // a newer description of the same time frees nothing
	res, err = f.book.Upsert(ctx, f.shop, in)
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Nil(t, res.Declaration)
	require.Equal(t, 3, res.Appointment.Releases)
}
