package stats_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/stats"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// history is a shop's fixed two weeks (Mon 9 to Sun 22 November 2026, New York, UTC-5
// throughout) of openings, offers and bookings, across two services and two people,
// whose figures are worked out by hand in the tests.
type history struct {
	pool *pgxpool.Pool
	shop shops.Shop
	svc  *stats.Service
	ana  uuid.UUID // staff
	ben  uuid.UUID
	n    int // customers added
}

// offerSpec is a batch of offers of one wave and status; sent false: never texted.
type offerSpec struct {
	wave   int
	status string
	n      int
	sent   bool
}

// bookingSpec is a booking of an opening: made by the opening's offer of status
// "accepted" (or "failed", a lapsed hold), in wave.
type bookingSpec struct {
	wave       int
	status     string
	amount     int64
	service    string
	checkout   bool
	attendance string // "", attended, no_show
	moveUp     bool
}

// openingSpec is one opening of the history.
type openingSpec struct {
	name     string
	local    string // its start, in the shop's time zone: "2026-11-09 10:00"
	service  string
	staff    uuid.UUID
	status   string
	price    int64
	fillSecs int // how long after its declaration it was filled
	offers   []offerSpec
	booking  *bookingSpec
}

func newHistory(t *testing.T) *history {
	t.Helper()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	shop, _, err := shops.New(pool, shops.Config{}).Create(ctx, shops.NewShop{Name: "Cuts", Timezone: "America/New_York",
		SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	h := &history{pool: pool, shop: shop, svc: stats.New(pool, stats.Config{Now: func() time.Time {
		return time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC) // Sun 22 Nov, 22:00 in New York
	}})}
	h.ana, h.ben = h.staff(t, shop.ID, "Ana"), h.staff(t, shop.ID, "Ben")
	return h
}

func (h *history) staff(t *testing.T, shopID uuid.UUID, name string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, h.pool.QueryRow(context.Background(), `INSERT INTO staff (shop_id, name, created_at, updated_at)
		VALUES ($1, $2, now(), now()) RETURNING id`, shopID, name).Scan(&id))
	return id
}

// add records an opening of shop with its offers (one customer each) and booking.
func (h *history) add(t *testing.T, shop shops.Shop, o openingSpec) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	cs := customertest.New(t, h.pool)
	starts, err := time.ParseInLocation("2006-01-02 15:04", o.local, shop.Location)
	require.NoError(t, err)
	declared := starts.Add(-48 * time.Hour)
	var filledAt *time.Time
	if o.fillSecs > 0 {
		f := declared.Add(time.Duration(o.fillSecs) * time.Second)
		filledAt = &f
	}
	var staff *uuid.UUID
	if o.staff != uuid.Nil {
		staff = &o.staff
	}
	var id uuid.UUID
	require.NoError(t, h.pool.QueryRow(ctx, `INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents,
		status, created_at, updated_at, filled_at, staff_id) VALUES ($1, $2, 30, $3, $4, 'open', $5, $5, $6, $7) RETURNING id`,
		shop.ID, starts, o.service, o.price, declared, filledAt, staff).Scan(&id))
	var booker, bookerOffer uuid.UUID
	n := 0
	for _, spec := range o.offers {
		for range spec.n {
			n++
			h.n++
			c, err := cs.Add(ctx, shop.ID, customers.NewCustomer{
				Phone: fmt.Sprintf("+1555732%04d", h.n), Name: o.name + fmt.Sprint(n), SMSOptIn: true})
			require.NoError(t, err)
			var moveFrom *uuid.UUID
			if o.booking != nil && o.booking.moveUp && spec.wave == o.booking.wave && (spec.status == "accepted" || spec.status == "failed") {
				var a uuid.UUID
				require.NoError(t, h.pool.QueryRow(ctx, `INSERT INTO appointments (shop_id, source, external_id, customer_id,
					starts_at, duration_minutes, status, source_updated_at, created_at, changed_at)
					VALUES ($1, 'api', $2, $3, $4, 30, 'moved', now(), now(), now()) RETURNING id`,
					shop.ID, "later-"+o.name, c.ID, starts.Add(7*24*time.Hour)).Scan(&a))
				moveFrom = &a
			}
			var sentAt *time.Time
			if spec.sent {
				s := declared.Add(time.Minute)
				sentAt = &s
			}
			var offerID uuid.UUID
			require.NoError(t, h.pool.QueryRow(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave,
				status, created_at, sent_at, move_from) VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8) RETURNING id`,
				id, c.ID, shop.ID, spec.wave, spec.status, declared, sentAt, moveFrom).Scan(&offerID))
			if o.booking != nil && spec.wave == o.booking.wave && (spec.status == "accepted" || spec.status == "failed") {
				booker, bookerOffer = c.ID, offerID
			}
		}
	}
	if b := o.booking; b != nil {
		require.NotEqual(t, uuid.Nil, booker, "%s: a booking needs its offer", o.name)
		var session *string
		if b.checkout {
			s := "cs_" + o.name
			session = &s
		}
		made := declared.Add(time.Duration(o.fillSecs) * time.Second)
		_, err := h.pool.Exec(ctx, `INSERT INTO bookings (opening_id, customer_id, offer_id, shop_id, status, amount_cents, currency,
			stripe_checkout_session_id, created_at, updated_at, service, duration_minutes, staff_id, starts_at, ends_at,
			attended_at, no_show_at)
			VALUES ($1, $2, $3, $4, $5, $6, 'usd', $7, $8, $8, $9, 30, $10, $11, $13,
				CASE WHEN $12 = 'attended' THEN $11::timestamptz END, CASE WHEN $12 = 'no_show' THEN $11::timestamptz END)`,
			id, booker, bookerOffer, shop.ID, b.status, b.amount, session, made, b.service, staff, starts, b.attendance, starts.Add(30*time.Minute))
		require.NoError(t, err)
		if o.status == "filled" || o.status == "completed" {
			_, err = h.pool.Exec(ctx, `UPDATE slot_openings SET filled_by = $2 WHERE id = $1`, id, booker)
			require.NoError(t, err)
		}
	}
	_, err = h.pool.Exec(ctx, `UPDATE slot_openings SET status = $2 WHERE id = $1`, id, o.status)
	require.NoError(t, err)
	return id
}

// fixedHistory records the history the tests' figures are worked out from.
func fixedHistory(t *testing.T) *history {
	h := newHistory(t)
	ana, ben := h.ana, h.ben
	for _, o := range []openingSpec{
		// Week of Nov 9 (2026-W46).
		{name: "o1", local: "2026-11-09 10:00", service: "Cut", staff: ana, status: "filled", price: 3000, fillSecs: 600,
			offers:  []offerSpec{{1, "accepted", 1, true}, {1, "lost", 1, true}},
			booking: &bookingSpec{wave: 1, status: "confirmed", amount: 3000, service: "Cut", checkout: true, attendance: "attended"}},
		// Booked as another service at its price; its payment pending.
		{name: "o2", local: "2026-11-11 14:00", service: "Color", staff: ben, status: "filled", price: 8000, fillSecs: 1200,
			offers:  []offerSpec{{1, "declined", 1, true}, {1, "lost", 1, true}, {2, "accepted", 1, true}},
			booking: &bookingSpec{wave: 2, status: "pending_payment", amount: 7500, service: "Color", checkout: true}},
		// Expired: two texted without an answer, a hold that lapsed, one never texted.
		{name: "o3", local: "2026-11-13 09:00", service: "Cut", staff: ana, status: "expired", price: 3000,
			offers:  []offerSpec{{1, "sent", 2, true}, {1, "failed", 1, true}, {1, "lost", 1, false}},
			booking: &bookingSpec{wave: 1, status: "payment_failed", amount: 3000, service: "Cut", checkout: true}},
		// Sunday 23:30 in New York is Monday 04:30 UTC: it belongs to the week of Nov 9.
		{name: "o4", local: "2026-11-15 23:30", service: "Cut", staff: ben, status: "completed", price: 3000, fillSecs: 1800,
			offers:  []offerSpec{{1, "accepted", 1, true}},
			booking: &bookingSpec{wave: 1, status: "confirmed", amount: 3000, service: "Cut", checkout: true, attendance: "no_show", moveUp: true}},
		// Week of Nov 16 (2026-W47). Confirmed without a payment link: booked, not paid.
		{name: "o5", local: "2026-11-17 11:00", service: "Color", staff: ana, status: "filled", price: 8000, fillSecs: 3600,
			offers:  []offerSpec{{1, "accepted", 1, true}},
			booking: &bookingSpec{wave: 1, status: "confirmed", amount: 8000, service: "Color", attendance: "attended"}},
		{name: "o6", local: "2026-11-19 16:00", service: "Color", staff: ben, status: "open", price: 8000},
		// Not counted: cancelled by the owner, and the days either side of the period.
		{name: "o7", local: "2026-11-20 10:00", service: "Cut", staff: ana, status: "cancelled", price: 3000,
			offers: []offerSpec{{1, "lost", 1, true}}},
		{name: "o8", local: "2026-11-23 00:30", service: "Cut", staff: ana, status: "filled", price: 3000, fillSecs: 60,
			offers:  []offerSpec{{1, "accepted", 1, true}},
			booking: &bookingSpec{wave: 1, status: "confirmed", amount: 3000, service: "Cut", checkout: true}},
		{name: "o9", local: "2026-11-08 23:30", service: "Cut", staff: ben, status: "filled", price: 3000, fillSecs: 60,
			offers:  []offerSpec{{1, "accepted", 1, true}},
			booking: &bookingSpec{wave: 1, status: "confirmed", amount: 3000, service: "Cut", checkout: true}},
	} {
		h.add(t, h.shop, o)
	}
	// Another shop's opening in the same days counts for it only.
	other, _, err := shops.New(h.pool, shops.Config{}).Create(context.Background(), shops.NewShop{Name: "Other",
		Timezone: "America/New_York", SMSNumber: "+15555550199", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	h.add(t, other, openingSpec{name: "x1", local: "2026-11-10 10:00", service: "Cut", status: "filled", price: 5000, fillSecs: 60,
		offers:  []offerSpec{{1, "accepted", 1, true}},
		booking: &bookingSpec{wave: 1, status: "confirmed", amount: 5000, service: "Cut", checkout: true}})
	return h
}

func ptr(v int64) *int64 { return &v }

// The figures worked out by hand from fixedHistory.
var (
	week46 = api.Figures{Openings: 4, OpeningsOffered: 4, OpeningsReplied: 3, Filled: 3, FillRate: 0.75,
		TimeToFillMedianS: ptr(1200), TimeToFillP90S: ptr(1680), // 600, 1200, 1800: 1200 + 0.8×600
		OffersSent: 9, Replies: api.Replies{Booked: 3, Declined: 1, Missed: 2, NoReply: 2, Failed: 1},
		Bookings: 3, Paid: 2, PaidCents: 6000, RevenueCents: 13500, Attended: 1, NoShows: 1, MoveUps: 1}
	week47 = api.Figures{Openings: 2, OpeningsOffered: 1, OpeningsReplied: 1, Filled: 1, FillRate: 0.5,
		TimeToFillMedianS: ptr(3600), TimeToFillP90S: ptr(3600),
		OffersSent: 1, Replies: api.Replies{Booked: 1}, Bookings: 1, RevenueCents: 8000, Attended: 1}
	totals = api.Figures{Openings: 6, OpeningsOffered: 5, OpeningsReplied: 4, Filled: 4, FillRate: 0.6667,
		TimeToFillMedianS: ptr(1500), TimeToFillP90S: ptr(3060), // 600, 1200, 1800, 3600: 1200 + 0.5×600; 1800 + 0.7×1800
		OffersSent: 10, Replies: api.Replies{Booked: 4, Declined: 1, Missed: 2, NoReply: 2, Failed: 1},
		Bookings: 4, Paid: 2, PaidCents: 6000, RevenueCents: 21500, Attended: 2, NoShows: 1, MoveUps: 1}
)

// TestReportByWeek: every figure of the two weeks and their total, from the records; the
// Sunday 23:30 appointment counts in its own week in the shop's time zone, not in the
// next (as UTC would have it); cancelled openings, the days either side and another
// shop's openings count nowhere.
func TestReportByWeek(t *testing.T) {
	t.Parallel()
	h := fixedHistory(t)
	got, err := h.svc.Report(context.Background(), h.shop, stats.Query{From: "2026-11-09", To: "2026-11-22"})
	require.NoError(t, err)
	require.Equal(t, api.Stats{From: "2026-11-09", To: "2026-11-22", TimeZone: "America/New_York", Currency: "usd",
		GroupBy: "week", Totals: totals, Groups: []api.StatGroup{
			{Key: "2026-W46", Label: "Nov 9", Figures: week46},
			{Key: "2026-W47", Label: "Nov 16", Figures: week47},
		}}, got)
}

// TestReportGroups: by service (as booked), by person and by wave, each group's
// figures, and the totals whatever the grouping.
func TestReportGroups(t *testing.T) {
	t.Parallel()
	h := fixedHistory(t)
	ctx := context.Background()
	cases := []struct {
		groupBy string
		want    []api.StatGroup
	}{
		{"service", []api.StatGroup{
			{Key: "Color", Label: "Color", Figures: api.Figures{Openings: 3, OpeningsOffered: 2, OpeningsReplied: 2, Filled: 2,
				FillRate: 0.6667, TimeToFillMedianS: ptr(2400), TimeToFillP90S: ptr(3360),
				OffersSent: 4, Replies: api.Replies{Booked: 2, Declined: 1, Missed: 1},
				Bookings: 2, RevenueCents: 15500, Attended: 1}},
			{Key: "Cut", Label: "Cut", Figures: api.Figures{Openings: 3, OpeningsOffered: 3, OpeningsReplied: 2, Filled: 2,
				FillRate: 0.6667, TimeToFillMedianS: ptr(1200), TimeToFillP90S: ptr(1680),
				OffersSent: 6, Replies: api.Replies{Booked: 2, Missed: 1, NoReply: 2, Failed: 1},
				Bookings: 2, Paid: 2, PaidCents: 6000, RevenueCents: 6000, Attended: 1, NoShows: 1, MoveUps: 1}},
		}},
		{"staff", []api.StatGroup{
			{Key: h.ana.String(), Label: "Ana", Figures: api.Figures{Openings: 3, OpeningsOffered: 3, OpeningsReplied: 2, Filled: 2,
				FillRate: 0.6667, TimeToFillMedianS: ptr(2100), TimeToFillP90S: ptr(3300),
				OffersSent: 6, Replies: api.Replies{Booked: 2, Missed: 1, NoReply: 2, Failed: 1},
				Bookings: 2, Paid: 1, PaidCents: 3000, RevenueCents: 11000, Attended: 2}},
			{Key: h.ben.String(), Label: "Ben", Figures: api.Figures{Openings: 3, OpeningsOffered: 2, OpeningsReplied: 2, Filled: 2,
				FillRate: 0.6667, TimeToFillMedianS: ptr(1500), TimeToFillP90S: ptr(1740),
				OffersSent: 4, Replies: api.Replies{Booked: 2, Declined: 1, Missed: 1},
				Bookings: 2, Paid: 1, PaidCents: 3000, RevenueCents: 10500, NoShows: 1, MoveUps: 1}},
		}},
		{"wave", []api.StatGroup{
			// Wave 1 texted o1 to o5 and filled o1, o4 and o5.
			{Key: "1", Label: "Wave 1", Figures: api.Figures{Openings: 5, OpeningsOffered: 5, OpeningsReplied: 4, Filled: 3,
				FillRate: 0.6, TimeToFillMedianS: ptr(1800), TimeToFillP90S: ptr(3240),
				OffersSent: 9, Replies: api.Replies{Booked: 3, Declined: 1, Missed: 2, NoReply: 2, Failed: 1},
				Bookings: 3, Paid: 2, PaidCents: 6000, RevenueCents: 14000, Attended: 2, NoShows: 1, MoveUps: 1}},
			{Key: "2", Label: "Wave 2", Figures: api.Figures{Openings: 1, OpeningsOffered: 1, OpeningsReplied: 1, Filled: 1,
				FillRate: 1, TimeToFillMedianS: ptr(1200), TimeToFillP90S: ptr(1200),
				OffersSent: 1, Replies: api.Replies{Booked: 1}, Bookings: 1, RevenueCents: 7500}},
		}},
	}
	for _, c := range cases {
		t.Run(c.groupBy, func(t *testing.T) {
			got, err := h.svc.Report(ctx, h.shop, stats.Query{From: "2026-11-09", To: "2026-11-22", GroupBy: c.groupBy})
			require.NoError(t, err)
			require.Equal(t, totals, got.Totals)
			require.Equal(t, c.groupBy, got.GroupBy)
			require.Equal(t, c.want, got.Groups)
		})
	}
}

// TestRevenueMatchesFilledSlots: the revenue of a period, and of each week, is the sum
// of the amounts of the filled-slots list for the same days (the query behind the
// dashboard's list export), to the cent.
func TestRevenueMatchesFilledSlots(t *testing.T) {
	t.Parallel()
	h := fixedHistory(t)
	ctx := context.Background()
	for _, p := range [][2]string{{"2026-11-09", "2026-11-22"}, {"2026-11-09", "2026-11-15"}, {"2026-11-16", "2026-11-22"},
		{"2026-11-01", "2026-11-30"}, {"2026-11-15", "2026-11-15"}} {
		got, err := h.svc.Report(ctx, h.shop, stats.Query{From: p[0], To: p[1]})
		require.NoError(t, err)
		from, err := time.ParseInLocation(time.DateOnly, p[0], h.shop.Location)
		require.NoError(t, err)
		to, err := time.ParseInLocation(time.DateOnly, p[1], h.shop.Location)
		require.NoError(t, err)
		rows, err := db.New().DashboardFilledExport(ctx, h.pool, db.DashboardFilledExportParams{
			ShopID: h.shop.ID, StartsFrom: from, StartsUntil: to.AddDate(0, 0, 1), MaxRows: 50_000})
		require.NoError(t, err)
		var sum int64
		for _, r := range rows {
			sum += r.AmountCents
		}
		require.NotZero(t, sum, "%v", p)
		require.Equal(t, sum, got.Totals.RevenueCents, "%v", p)
		require.Equal(t, len(rows), got.Totals.Filled, "%v", p)
	}
}

// TestQueryValidation: bad queries are problem errors naming their field; missing dates
// default to 30 days.
func TestQueryValidation(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		q     stats.Query
		field string
	}{
		{"unknown grouping", stats.Query{GroupBy: "month"}, "group_by"},
		{"bad from", stats.Query{From: "9/11/2026", To: "2026-11-22"}, "from"},
		{"bad to", stats.Query{From: "2026-11-09", To: "2026-11-31"}, "to"},
		{"to before from", stats.Query{From: "2026-11-09", To: "2026-11-08"}, "to"},
		{"too long", stats.Query{From: "2025-01-01", To: "2026-01-02"}, "to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.svc.Report(ctx, h.shop, c.q)
			p, ok := problem.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, problem.Invalid, p.Kind)
			require.Equal(t, c.field, p.Field)
		})
	}
	got, err := h.svc.Report(ctx, h.shop, stats.Query{From: "2025-01-01", To: "2026-01-01"})
	require.NoError(t, err, "366 days is allowed")
	require.Len(t, got.Groups, 53)

	got, err = h.svc.Report(ctx, h.shop, stats.Query{})
	require.NoError(t, err)
	require.Equal(t, "2026-10-24", got.From, "30 days up to today, the shop's today")
	require.Equal(t, "2026-11-22", got.To)
	require.Equal(t, api.Figures{}, got.Totals)
	require.Len(t, got.Groups, 5, "the weeks of Oct 19, 26, Nov 2, 9 and 16, empty")
	require.Equal(t, "2026-W43", got.Groups[0].Key)

	got, err = h.svc.Report(ctx, h.shop, stats.Query{From: "2026-11-01"})
	require.NoError(t, err)
	require.Equal(t, "2026-11-30", got.To)
	got, err = h.svc.Report(ctx, h.shop, stats.Query{To: "2026-11-30"})
	require.NoError(t, err)
	require.Equal(t, "2026-11-01", got.From)
}

// TestWeeksAcrossDST: the week of the change back from summer time (Sunday 1 November
// 2026 in New York) is one week from its Monday to its Sunday night: an appointment at
// 23:30 on that Sunday (04:30 UTC on Monday) counts in it, one at 00:30 on the next
// Monday in the next.
func TestWeeksAcrossDST(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	for _, o := range []openingSpec{
		{name: "d1", local: "2026-10-26 00:30", service: "Cut", status: "open", price: 1000},
		{name: "d2", local: "2026-11-01 23:30", service: "Cut", staff: h.ana, status: "filled", price: 2000, fillSecs: 90,
			offers:  []offerSpec{{1, "accepted", 1, true}},
			booking: &bookingSpec{wave: 1, status: "confirmed", amount: 2000, service: "Cut"}},
		{name: "d3", local: "2026-11-02 00:30", service: "Cut", status: "open", price: 4000},
	} {
		h.add(t, h.shop, o)
	}
	got, err := h.svc.Report(context.Background(), h.shop, stats.Query{From: "2026-10-26", To: "2026-11-08"})
	require.NoError(t, err)
	require.Len(t, got.Groups, 2)
	require.Equal(t, "2026-W44", got.Groups[0].Key)
	require.Equal(t, "Oct 26", got.Groups[0].Label)
	require.Equal(t, 2, got.Groups[0].Figures.Openings)
	require.Equal(t, int64(2000), got.Groups[0].Figures.RevenueCents)
	require.Equal(t, ptr(90), got.Groups[0].Figures.TimeToFillMedianS)
	require.Equal(t, "2026-W45", got.Groups[1].Key)
	require.Equal(t, 1, got.Groups[1].Figures.Openings)
	require.Equal(t, 3, got.Totals.Openings)
}
