// Package stats says what the waitlist earned: a shop's recovery figures over a period
// (openings declared and filled, time to fill, offers and their outcomes, bookings,
// payments, revenue, attendance, move-ups), in total and per week, service, person or
// wave, read from the records as they stand (GET /api/stats, the dashboard's funnel and
// charts, a CSV file). Nothing is counted as it happens, so nothing can drift.
//
// Every figure belongs to the period of its opening's appointment: an opening counts
// when its appointment starts on a local date of the period, and its offers, replies
// and bookings count with it. Revenue is then the filled-slots list's sum (the
// dashboard's list and its CSV export) for the same days, to the cent.
//
// The package writes nothing: it reads the openings (internal/slots), offers
// (internal/offers) and bookings (internal/ledger) with its own read-only queries
// (db/queries/stats.sql), and sums them per group in Go, where one opening may count in
// several groups (the waves that texted it).
//
//	stats.go   Service, Query and Report
//	csv.go     WriteCSV
//	svg.go     FunnelSVG and ChartSVG, the dashboard's pictures
package stats

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// queries is this package's one way to its SQL: sqlc's Queries holds no state.
var queries = db.New()

const (
	// DefaultDays is the period a query without dates covers: the last 30 days, today
	// included.
	DefaultDays = 30
	// MaxDays is the longest period one query covers (a leap year).
	MaxDays = 366
)

// Config configures a Service. Zero fields take their defaults.
type Config struct {
	// Now is the clock the default period ends by (default time.Now).
	Now func() time.Time
}

// Service reports shops' recovery figures.
type Service struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// New returns a Service reading from pool.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Service{pool: pool, now: now}
}

// Query asks for a period's figures. From and To are local dates of the shop
// (YYYY-MM-DD, both inclusive): both empty, the last DefaultDays days up to today; one
// empty, DefaultDays days from (or up to) the other. GroupBy is api.StatsByWeek (the
// default), api.StatsByService, api.StatsByStaff or api.StatsByWave.
type Query struct {
	From, To string
	GroupBy  string
}

// period is a validated Query: the local dates and the instants they span.
type period struct {
	from, to     time.Time // local midnights of the first and last day
	since, until time.Time // [since, until): the appointments that count
	groupBy      string
}

// parse validates q for shop: problem errors (Invalid) name the field at fault.
func (s *Service) parse(shop shops.Shop, q Query) (period, error) {
	loc := shop.Location
	groupBy := cmp.Or(q.GroupBy, api.StatsByWeek)
	switch groupBy {
	case api.StatsByWeek, api.StatsByService, api.StatsByStaff, api.StatsByWave:
	default:
		return period{}, problem.Invalidf("group_by", "group_by must be one of week, service, staff, wave")
	}
	date := func(field, v string) (time.Time, error) {
		d, err := time.ParseInLocation(time.DateOnly, v, loc)
		if err != nil {
			return time.Time{}, problem.Invalidf(field, "%s must be a date, YYYY-MM-DD", field)
		}
		return d, nil
	}
	var from, to time.Time
	var err error
	switch {
	case q.From == "" && q.To == "":
		now := s.now().In(loc)
		to = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
		from = to.AddDate(0, 0, -(DefaultDays - 1))
	case q.To == "":
		if from, err = date("from", q.From); err != nil {
			return period{}, err
		}
		to = from.AddDate(0, 0, DefaultDays-1)
	case q.From == "":
		if to, err = date("to", q.To); err != nil {
			return period{}, err
		}
		from = to.AddDate(0, 0, -(DefaultDays - 1))
	default:
		if from, err = date("from", q.From); err != nil {
			return period{}, err
		}
		if to, err = date("to", q.To); err != nil {
			return period{}, err
		}
	}
	if to.Before(from) {
		return period{}, problem.Invalidf("to", "to must not come before from")
	}
	if days(from, to) > MaxDays {
		return period{}, problem.Invalidf("to", "a period covers at most %d days", MaxDays)
	}
	return period{from: from, to: to, since: from, until: to.AddDate(0, 0, 1), groupBy: groupBy}, nil
}

// days counts the local dates from from to to, both included (a day of a DST change is
// one day whatever its length).
func days(from, to time.Time) int {
	a := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	b := time.Date(to.Year(), to.Month(), to.Day(), 0, 0, 0, 0, time.UTC)
	return int(b.Sub(a)/(24*time.Hour)) + 1
}

// Report returns the shop's figures for q's period, grouped as q asks. A bad query is a
// problem error (Invalid) naming its field.
func (s *Service) Report(ctx context.Context, shop shops.Shop, q Query) (api.Stats, error) {
	p, err := s.parse(shop, q)
	if err != nil {
		return api.Stats{}, err
	}
	// The three reads see one snapshot, so that a YES between them cannot count a
	// booking whose opening is not yet filled; read-only, as the package writes nothing.
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return api.Stats{}, fmt.Errorf("begin stats read: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	openings, err := queries.StatsOpenings(ctx, tx, db.StatsOpeningsParams{
		ShopID: shop.ID, StartsFrom: p.since, StartsUntil: p.until})
	if err != nil {
		return api.Stats{}, fmt.Errorf("read openings of shop %s: %w", shop.ID, err)
	}
	offers, err := queries.StatsOffers(ctx, tx, db.StatsOffersParams{
		ShopID: shop.ID, StartsFrom: p.since, StartsUntil: p.until})
	if err != nil {
		return api.Stats{}, fmt.Errorf("read offers of shop %s: %w", shop.ID, err)
	}
	bookings, err := queries.StatsBookings(ctx, tx, db.StatsBookingsParams{
		ShopID: shop.ID, StartsFrom: p.since, StartsUntil: p.until})
	if err != nil {
		return api.Stats{}, fmt.Errorf("read bookings of shop %s: %w", shop.ID, err)
	}
	r := newReport(p, shop.Location)
	for _, o := range openings {
		r.opening(o)
	}
	for _, o := range offers {
		r.offers(o)
	}
	for _, b := range bookings {
		r.booking(b)
	}
	return api.Stats{
		From: p.from.Format(time.DateOnly), To: p.to.Format(time.DateOnly),
		TimeZone: shop.Timezone, Currency: shop.Currency, GroupBy: p.groupBy,
		Totals: r.totals.figures(), Groups: r.groups(),
	}, nil
}

// tally sums a set of openings' figures.
type tally struct {
	f                api.Figures
	openings         map[uuid.UUID]bool // by wave: the openings a wave texted or filled
	offered, replied map[uuid.UUID]bool
	fills            []int64
	key, label       string
	order            int
}

func newTally(key, label string, order int) *tally {
	return &tally{openings: map[uuid.UUID]bool{}, offered: map[uuid.UUID]bool{}, replied: map[uuid.UUID]bool{},
		key: key, label: label, order: order}
}

// fill counts a filled opening.
func (t *tally) fill(o db.StatsOpeningsRow) {
	t.f.Filled++
	t.f.RevenueCents += o.AmountCents
	t.fills = append(t.fills, o.FillSeconds)
}

// offers counts n texted offers of opening id with an offer's status, by the outcome
// the offers' record gives a texted offer (offers.OutcomeOf).
func (t *tally) offers(id uuid.UUID, status string, n int) {
	t.f.OffersSent += n
	t.offered[id] = true
	texted := time.Time{}
	switch offers.OutcomeOf(status, &texted) {
	case offers.OutcomeBooked:
		t.f.Replies.Booked += n
		t.replied[id] = true
	case offers.OutcomeDeclined:
		t.f.Replies.Declined += n
		t.replied[id] = true
	case offers.OutcomeMissed:
		t.f.Replies.Missed += n
	case offers.OutcomeNoReply, offers.OutcomeSending:
		t.f.Replies.NoReply += n
	default:
		t.f.Replies.Failed += n
	}
}

func (t *tally) booking(b db.StatsBookingsRow) {
	t.f.Bookings++
	if b.Paid {
		t.f.Paid++
		t.f.PaidCents += b.AmountCents
	}
	if b.Attended {
		t.f.Attended++
	}
	if b.NoShow {
		t.f.NoShows++
	}
	if b.MoveUp {
		t.f.MoveUps++
	}
}

// figures are the tally's figures, with its rates and percentiles worked out.
func (t *tally) figures() api.Figures {
	f := t.f
	if len(t.openings) > 0 {
		f.Openings = len(t.openings)
	}
	f.OpeningsOffered, f.OpeningsReplied = len(t.offered), len(t.replied)
	if f.Openings > 0 {
		f.FillRate = math.Round(float64(f.Filled)/float64(f.Openings)*10000) / 10000
	}
	if len(t.fills) > 0 {
		slices.Sort(t.fills)
		med, p90 := percentile(t.fills, 0.5), percentile(t.fills, 0.9)
		f.TimeToFillMedianS, f.TimeToFillP90S = &med, &p90
	}
	return f
}

// percentile is Postgres' percentile_cont over sorted values: interpolated between the
// two nearest ranks, rounded to the second.
func percentile(sorted []int64, p float64) int64 {
	pos := p * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	v := float64(sorted[lo]) + (float64(sorted[hi])-float64(sorted[lo]))*(pos-float64(lo))
	return int64(math.Round(v))
}

// report sums a period's records into its totals and groups.
type report struct {
	p      period
	loc    *time.Location
	totals *tally
	byKey  map[string]*tally
	// keyOf is each opening's group (not by wave: an opening's offers and bookings
	// count in their waves).
	keyOf map[uuid.UUID]*tally
}

func newReport(p period, loc *time.Location) *report {
	r := &report{p: p, loc: loc, totals: newTally("", "Total", 0), byKey: map[string]*tally{}, keyOf: map[uuid.UUID]*tally{}}
	if p.groupBy == api.StatsByWeek {
		// Every week of the period is listed, empty ones too: a chart shows the gaps.
		for d := monday(p.from); !d.After(p.to); d = d.AddDate(0, 0, 7) {
			r.group(weekKey(d), d.Format("Jan 2"), len(r.byKey))
		}
	}
	return r
}

// monday is the local midnight starting t's ISO week.
func monday(t time.Time) time.Time {
	back := (int(t.Weekday()) + 6) % 7
	return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, t.Location())
}

// weekKey names t's ISO week: "2026-W47".
func weekKey(t time.Time) string {
	y, w := t.ISOWeek()
	return fmt.Sprintf("%d-W%02d", y, w)
}

// group returns the group of key, made with label and order if new.
func (r *report) group(key, label string, order int) *tally {
	t, ok := r.byKey[key]
	if !ok {
		t = newTally(key, label, order)
		r.byKey[key] = t
	}
	return t
}

func (r *report) wave(n int32) *tally {
	if n <= 0 {
		return nil // a booking made without an offer belongs to no wave
	}
	return r.group(strconv.Itoa(int(n)), "Wave "+strconv.Itoa(int(n)), int(n))
}

func (r *report) opening(o db.StatsOpeningsRow) {
	r.totals.f.Openings++
	if o.Filled {
		r.totals.fill(o)
	}
	var g *tally
	switch r.p.groupBy {
	case api.StatsByWave:
		if o.Filled {
			if g = r.wave(o.FillWave); g != nil {
				g.openings[o.ID] = true
				g.fill(o)
			}
		}
		return
	case api.StatsByWeek:
		d := monday(o.StartsAt.In(r.loc))
		g = r.group(weekKey(d), d.Format("Jan 2"), 0)
	case api.StatsByService:
		g = r.group(o.Service, cmp.Or(o.Service, "Any service"), 0)
	case api.StatsByStaff:
		key := ""
		if o.StaffID.Valid {
			key = o.StaffID.UUID.String()
		}
		g = r.group(key, cmp.Or(o.StaffName, "Anyone"), 0)
	}
	r.keyOf[o.ID] = g
	g.f.Openings++
	if o.Filled {
		g.fill(o)
	}
}

func (r *report) offers(o db.StatsOffersRow) {
	r.totals.offers(o.OpeningID, o.Status, int(o.Offers))
	g := r.keyOf[o.OpeningID]
	if r.p.groupBy == api.StatsByWave {
		g = r.wave(o.Wave)
		if g != nil {
			g.openings[o.OpeningID] = true
		}
	}
	if g != nil {
		g.offers(o.OpeningID, o.Status, int(o.Offers))
	}
}

func (r *report) booking(b db.StatsBookingsRow) {
	r.totals.booking(b)
	g := r.keyOf[b.OpeningID]
	if r.p.groupBy == api.StatsByWave {
		g = r.wave(b.Wave)
	}
	if g != nil {
		g.booking(b)
	}
}

// groups are the report's groups in their order: weeks and waves in time, services
// and people by name (the unnamed last).
func (r *report) groups() []api.StatGroup {
	ts := make([]*tally, 0, len(r.byKey))
	for _, t := range r.byKey {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *tally) int {
		switch r.p.groupBy {
		case api.StatsByWeek, api.StatsByWave:
			if c := cmp.Compare(a.order, b.order); c != 0 {
				return c
			}
			return strings.Compare(a.key, b.key)
		}
		if (a.key == "") != (b.key == "") {
			if a.key == "" {
				return 1
			}
			return -1
		}
		if c := strings.Compare(strings.ToLower(a.label), strings.ToLower(b.label)); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	out := make([]api.StatGroup, 0, len(ts))
	for _, t := range ts {
		out = append(out, api.StatGroup{Key: t.key, Label: t.label, Figures: t.figures()})
	}
	return out
}
