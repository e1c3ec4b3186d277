package calendar_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	ics "github.com/arran4/golang-ical"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

type scene struct {
	t         *testing.T
	pool      *pgxpool.Pool
	shops     *shops.Service
	customers *customers.Service
	cal       *calendar.Service
	shop      shops.Shop
	clk       *clock
}

func newScene(t *testing.T) *scene {
	t.Helper()
	pool, _ := pgtest.New(t)
	clk := &clock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	s := &scene{t: t, pool: pool, clk: clk, shops: shops.New(pool, shops.Config{Now: clk.Now}), customers: customertest.NewWith(t, pool, customers.Config{Now: clk.Now})}
	s.cal = calendar.New(pool, s.shops, calendar.Config{Now: clk.Now, PublicURL: "https://slots.example.test/"})
	var err error
	s.shop, _, err = s.shops.Create(context.Background(), shops.NewShop{Name: "Ana's Salon; Soho, London", Timezone: "Europe/London",
		SMSNumber: "+447700900001", Currency: "gbp", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	return s
}

func (s *scene) customer(phone, name string) customers.Customer {
	s.t.Helper()
	c, err := s.customers.Add(context.Background(), s.shop.ID, customers.NewCustomer{Phone: phone, Name: name, SMSOptIn: true})
	require.NoError(s.t, err)
	return c
}

// opening inserts an opening (rows as slots writes them) and, with a customer, its
// booking in status.
func (s *scene) opening(startsAt time.Time, status string, c *customers.Customer, bookingStatus string) (uuid.UUID, uuid.UUID) {
	s.t.Helper()
	ctx := context.Background()
	var id, booking uuid.UUID
	var filledBy *uuid.UUID
	if c != nil && (bookingStatus == "pending_payment" || bookingStatus == "confirmed") {
		filledBy = &c.ID
	}
	created := s.clk.Now().Add(-time.Hour)
	require.NoError(s.t, s.pool.QueryRow(ctx, `INSERT INTO slot_openings
		(shop_id, starts_at, duration_minutes, service, price_cents, status, filled_by, created_at, updated_at)
		VALUES ($1, $2, 45, 'Cut & finish', 3500, $3, $4, $5, $5) RETURNING id`, s.shop.ID, startsAt, status, filledBy, created).Scan(&id))
	if c != nil {
		require.NoError(s.t, s.pool.QueryRow(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 3500, 'gbp', $5, $5) RETURNING id`, id, c.ID, s.shop.ID, bookingStatus, created).Scan(&booking))
	}
	return id, booking
}

// feed fetches and parses the feed with a real iCalendar parser, after checking the
// document's form: CRLF line ends, no line over 75 octets, valid UTF-8.
func (s *scene) feed(opts calendar.Options) (*ics.Calendar, calendar.Feed) {
	s.t.Helper()
	f, err := s.cal.Feed(context.Background(), s.shop.CalendarToken, opts)
	require.NoError(s.t, err)
	checkForm(s.t, f.Body)
	cal, err := ics.ParseCalendar(bytes.NewReader(f.Body))
	require.NoError(s.t, err, "%s", f.Body)
	return cal, f
}

func checkForm(t *testing.T, body []byte) {
	t.Helper()
	require.True(t, bytes.HasSuffix(body, []byte("END:VCALENDAR\r\n")))
	lines := bytes.Split(bytes.TrimSuffix(body, []byte("\r\n")), []byte("\r\n"))
	for i, l := range lines {
		require.NotContains(t, string(l), "\n", "line %d: a bare LF", i+1)
		require.NotContains(t, string(l), "\r", "line %d: a bare CR", i+1)
		require.LessOrEqual(t, len(l), 75, "line %d is %d octets: %q", i+1, len(l), l)
		require.True(t, utf8.Valid(l), "line %d splits a character: %q", i+1, l)
	}
}

func events(cal *ics.Calendar) map[uuid.UUID]*ics.VEvent {
	out := map[uuid.UUID]*ics.VEvent{}
	for _, e := range cal.Events() {
		id, ok := calendar.LookupID(e.Id())
		if ok {
			out[id] = e
		}
	}
	return out
}

func prop(e *ics.VEvent, p ics.ComponentProperty) string {
	if v := e.GetProperty(p); v != nil {
		return v.Value
	}
	return ""
}

// TestFeedShowsBookings: held and confirmed bookings are events at the right instant,
// with the first name and a masked number; lapsed, refunded and cancelled ones are
// CANCELLED; open openings appear only when asked; nothing outside the window.
func TestFeedShowsBookings(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	bea := s.customer("+447700900111", "Bea Ångström-Łukasiewicz")
	cal := s.customer("+447700900222", "Cal")
	now := s.clk.Now()
	// 15:00 in London in summer is 14:00 UTC: the feed says 14:00Z.
	summer := time.Date(2027, 5, 1, 14, 0, 0, 0, time.UTC)
	held, _ := s.opening(now.Add(48*time.Hour), "filled", &bea, "pending_payment")
	confirmed, _ := s.opening(summer, "filled", &cal, "confirmed")
	lapsed, _ := s.opening(now.Add(72*time.Hour), "open", &bea, "payment_failed")
	cancelled, _ := s.opening(now.Add(96*time.Hour), "cancelled", nil, "")
	open, _ := s.opening(now.Add(120*time.Hour), "open", nil, "")
	s.opening(now.Add(-61*24*time.Hour), "filled", &cal, "confirmed") // before the window
	s.opening(now.Add(181*24*time.Hour), "filled", &cal, "confirmed") // after it

	c, _ := s.feed(calendar.Options{})
	require.Equal(t, "Europe/London", calProp(c, ics.PropertyXWRTimezone))
	ev := events(c)
	require.Len(t, ev, 3, "held, confirmed and the lapsed hold; not the unbooked ones, nor outside the window")

	h := ev[held]
	require.Equal(t, "TENTATIVE", prop(h, ics.ComponentPropertyStatus))
	require.Equal(t, "Cut & finish – Bea", prop(h, ics.ComponentPropertySummary))
	desc := prop(h, ics.ComponentPropertyDescription)
	require.Contains(t, desc, "Customer: Bea (+447*******11)")
	require.Contains(t, desc, "awaiting payment")
	require.Contains(t, desc, "Dashboard: https://slots.example.test/dashboard")
	require.NotContains(t, desc, "Ångström", "no full name unless the owner asks")
	require.NotContains(t, desc, "+447700900111")

	cf := ev[confirmed]
	require.Equal(t, "CONFIRMED", prop(cf, ics.ComponentPropertyStatus))
	start, err := cf.GetStartAt()
	require.NoError(t, err)
	require.True(t, summer.Equal(start), "start %s", start)
	require.Equal(t, "20270501T140000Z", prop(cf, ics.ComponentPropertyDtStart), "UTC, which every client shows in its own zone")
	end, err := cf.GetEndAt()
	require.NoError(t, err)
	require.Equal(t, 45*time.Minute, end.Sub(start))
	require.Contains(t, prop(cf, ics.ComponentPropertyDescription), "£35.00")
	require.Equal(t, "opening-"+confirmed.String()+"@slots.example.test", cf.Id())

	require.Equal(t, "CANCELLED", prop(ev[lapsed], ics.ComponentPropertyStatus))
	require.Contains(t, prop(ev[lapsed], ics.ComponentPropertyDescription), "hold lapsed")

	c, _ = s.feed(calendar.Options{IncludeOpen: true})
	ev = events(c)
	require.Len(t, ev, 5)
	require.Equal(t, "TENTATIVE", prop(ev[open], ics.ComponentPropertyStatus))
	require.Equal(t, "Open slot: Cut & finish", prop(ev[open], ics.ComponentPropertySummary))
	require.Equal(t, "TENTATIVE", prop(ev[lapsed], ics.ComponentPropertyStatus), "offered again: an open slot")
	require.Equal(t, "CANCELLED", prop(ev[cancelled], ics.ComponentPropertyStatus))

	// Full details, when the owner turns them on.
	on := true
	_, err = s.shops.Update(context.Background(), s.shop.ID, shops.ShopChange{CalendarFullDetails: &on})
	require.NoError(t, err)
	c, _ = s.feed(calendar.Options{})
	h = events(c)[held]
	require.Equal(t, "Cut & finish – Bea Ångström-Łukasiewicz", prop(h, ics.ComponentPropertySummary))
	require.Contains(t, prop(h, ics.ComponentPropertyDescription), "Customer: Bea Ångström-Łukasiewicz, +447700900111")
}

func calProp(c *ics.Calendar, p ics.Property) string {
	for _, cp := range c.CalendarProperties {
		if cp.IANAToken == string(p) {
			return cp.Value
		}
	}
	return ""
}

// TestFeedChangesWithTheBooking: when a held booking is confirmed, then its payment
// refunded, the event keeps its UID, its SEQUENCE and LAST-MODIFIED move on, its status
// follows, and the ETag changes; an unchanged feed keeps its ETag.
func TestFeedChangesWithTheBooking(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	bea := s.customer("+447700900111", "Bea")
	id, booking := s.opening(s.clk.Now().Add(48*time.Hour), "filled", &bea, "pending_payment")
	c1, f1 := s.feed(calendar.Options{})
	_, again := s.feed(calendar.Options{})
	require.Equal(t, f1.ETag, again.ETag, "same bookings, same feed")
	e1 := events(c1)[id]

	_, err := s.pool.Exec(ctx, `UPDATE bookings SET status = 'confirmed', updated_at = updated_at + interval '10 minutes' WHERE id = $1`, booking)
	require.NoError(t, err)
	c2, f2 := s.feed(calendar.Options{})
	e2 := events(c2)[id]
	require.Equal(t, e1.Id(), e2.Id())
	require.Equal(t, "CONFIRMED", prop(e2, ics.ComponentPropertyStatus))
	require.Greater(t, seq(t, e2), seq(t, e1))
	m1, err := e1.GetLastModifiedAt()
	require.NoError(t, err)
	m2, err := e2.GetLastModifiedAt()
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, m2.Sub(m1))
	require.NotEqual(t, f1.ETag, f2.ETag)

	_, err = s.pool.Exec(ctx, `UPDATE bookings SET status = 'payment_failed', refund_id = 're_1', updated_at = updated_at + interval '20 minutes' WHERE id = $1`, booking)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `UPDATE slot_openings SET status = 'open', filled_by = NULL, generation = 2, updated_at = updated_at + interval '20 minutes' WHERE id = $1`, id)
	require.NoError(t, err)
	c3, _ := s.feed(calendar.Options{})
	e3 := events(c3)[id]
	require.Equal(t, "CANCELLED", prop(e3, ics.ComponentPropertyStatus), "a refunded booking is off")
	require.Contains(t, prop(e3, ics.ComponentPropertyDescription), "refunded")
	require.Greater(t, seq(t, e3), seq(t, e2))
}

// TestFeedVersionsPerView: an event says different things with and without open
// openings (a lapsed hold is "Cancelled" in one, "Open slot" in the other), so each view
// keeps its own version: calendars subscribed to both, read in turn, never see a change
// that did not happen. A change no row's updated_at records (the customer's new name)
// still moves both on, once, LAST-MODIFIED to when the feed saw it.
func TestFeedVersionsPerView(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	bea := s.customer("+447700900111", "Bea")
	id, _ := s.opening(s.clk.Now().Add(72*time.Hour), "open", &bea, "payment_failed")
	version := func(opts calendar.Options) (int, time.Time, string) {
		t.Helper()
		c, _ := s.feed(opts)
		e := events(c)[id]
		require.NotNil(t, e)
		m, err := e.GetLastModifiedAt()
		require.NoError(t, err)
		return seq(t, e), m, prop(e, ics.ComponentPropertySummary)
	}
	seqClosed, modClosed, sumClosed := version(calendar.Options{})
	seqOpen, modOpen, sumOpen := version(calendar.Options{IncludeOpen: true})
	require.NotEqual(t, sumClosed, sumOpen, "the views say different things")
	for range 3 {
		n, m, _ := version(calendar.Options{})
		require.Equal(t, seqClosed, n)
		require.Equal(t, modClosed, m)
		n, m, _ = version(calendar.Options{IncludeOpen: true})
		require.Equal(t, seqOpen, n)
		require.Equal(t, modOpen, m)
	}

	s.clk.mu.Lock()
	s.clk.t = s.clk.t.Add(time.Hour)
	s.clk.mu.Unlock()
	_, err := s.pool.Exec(context.Background(), `UPDATE customers SET name = 'Beatrix' WHERE id = $1`, bea.ID)
	require.NoError(t, err)
	n, m, summary := version(calendar.Options{})
	require.Contains(t, summary, "Beatrix")
	require.Equal(t, seqClosed+1, n)
	require.Equal(t, s.clk.Now().Truncate(time.Second), m.UTC(), "seen now: no row records when the name changed")
	n, _, summary = version(calendar.Options{IncludeOpen: true})
	require.Equal(t, seqOpen+1, n, "the open view names her too (%s)", summary)
	n, _, _ = version(calendar.Options{IncludeOpen: true})
	require.Equal(t, seqOpen+1, n, "once per change")
}

func seq(t *testing.T, e *ics.VEvent) int {
	t.Helper()
	n, err := strconv.Atoi(prop(e, ics.ComponentPropertySequence))
	require.NoError(t, err)
	return n
}

// TestFeedEscapesAndFolds: names with the characters iCalendar escapes (comma,
// semicolon, backslash, newline) and long multi-byte text come back
// from the parser exactly as written, folded at 75 octets without splitting a character.
func TestFeedEscapesAndFolds(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	on := true
	_, err := s.shops.Update(context.Background(), s.shop.ID, shops.ShopChange{CalendarFullDetails: &on})
	require.NoError(t, err)
	name := "Zoë \"Zee\" O'Brien; Jr.,\nthe \\ " + strings.Repeat("ĀĒĪŌŪ日本", 9)
	zoe := s.customer("+447700900333", name)
	id, _ := s.opening(s.clk.Now().Add(48*time.Hour), "filled", &zoe, "confirmed")
	ann := s.customer("+447700900444", "Ann\rBoleyn\x7f")
	annID, _ := s.opening(s.clk.Now().Add(50*time.Hour), "filled", &ann, "confirmed")
	c, f := s.feed(calendar.Options{})
	require.Equal(t, "Cut & finish – Ann Boleyn", strings.TrimSpace(prop(events(c)[annID], ics.ComponentPropertySummary)),
		"a carriage return or another control character would break the line; it becomes a space")
	e := events(c)[id]
	require.Equal(t, "Cut & finish – "+name, prop(e, ics.ComponentPropertySummary))
	require.Contains(t, prop(e, ics.ComponentPropertyDescription), "Customer: "+name+", +447700900333\n")
	require.Contains(t, string(f.Body), `\;`, "semicolons escaped")
	require.Contains(t, string(f.Body), "\r\n ", "long lines folded")
	require.Equal(t, "Ana's Salon; Soho, London – recovered slots", calProp(c, ics.PropertyXWRCalName))
}

// TestFeedToken: an unknown or rotated token finds nothing; the new one works at once.
func TestFeedToken(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	_, err := s.cal.Feed(ctx, "cal_"+strings.Repeat("0", 64), calendar.Options{})
	require.ErrorIs(t, err, calendar.ErrNotFound)
	old := s.shop.CalendarToken
	rotated, err := s.shops.RotateCalendarToken(ctx, s.shop.ID)
	require.NoError(t, err)
	_, err = s.cal.Feed(ctx, old, calendar.Options{})
	require.ErrorIs(t, err, calendar.ErrNotFound)
	_, err = s.cal.Feed(ctx, rotated.CalendarToken, calendar.Options{})
	require.NoError(t, err)
	require.Equal(t, "https://slots.example.test/calendar/"+rotated.CalendarToken+".ics", calendar.URL("https://slots.example.test/", rotated.CalendarToken))
}
