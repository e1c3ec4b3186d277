package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
)

// The shops scenario: real load is many shops whose waves overlap, not one shop's storm.
// N shops (each with a few customers, a long code's one text a second, one opening)
// declare their openings evenly over a minute while customers of other shops keep
// replying YES at a steady rate. It checks, from the Twilio fake's arrival times, that
// no shop's number ever sent faster than its rate and that every shop's first text went
// out within a second of its declaration, and it compares the YES path's p99 during the
// waves with its p99 just before them (the same offered load). Several sizes run in
// turn (-shops 1000,10000) and are printed side by side: how the cost grows.

// shopsOptions are the shops scenario's flags.
type shopsOptions struct {
	counts    string
	customers int
	window    time.Duration
	yesRate   float64
	slack     time.Duration
}

// maxShops bounds one size of the scenario.
const maxShops = 20000

// replyShopCustomers is how many customers hold an offer in each of the shops whose
// customers reply YES (one booking and four "taken" an opening, like throughput).
const replyShopCustomers = 5

// shopsResult is one size's run.
type shopsResult struct {
	Shops            int     `json:"shops"`
	CustomersPerShop int     `json:"customers_per_shop"`
	Instances        int     `json:"instances"`
	WindowS          float64 `json:"declare_window_s"`
	DeclaredS        float64 `json:"declared_in_s"`
	DeclareErrors    int     `json:"declare_errors"`
	Texts            int     `json:"texts"`
	WantTexts        int     `json:"want_texts"`
	Duplicates       int     `json:"duplicate_texts"`
	Missing          int     `json:"customers_not_texted"`
	// WavesS is the time from the first declaration to the last text.
	WavesS float64            `json:"waves_s"`
	Pace   loadkit.PaceReport `json:"pace"`
	// FirstText and LastText are each shop's first and last text after the request
	// that declared its opening left, in seconds.
	FirstText       latencies `json:"first_text_s"`
	FirstOverSecond int       `json:"shops_first_text_over_1s"`
	LastText        latencies `json:"last_text_s"`
	YesWithout      latencies `json:"yes_ms_without_waves"`
	YesDuring       latencies `json:"yes_ms_during_waves"`
	YesWithoutN     int       `json:"yes_without_waves"`
	YesDuringN      int       `json:"yes_during_waves"`
	YesP99Ratio     float64   `json:"yes_p99_ratio"`
	Outcomes        map[string]int
	Bookings        int       `json:"bookings"`
	WantBookings    int       `json:"want_bookings"`
	DoubleBooked    int       `json:"double_booked_openings"`
	CPUPerTextMS    float64   `json:"server_cpu_ms_per_text"`
	PgCPUPerTextMS  float64   `json:"postgres_cpu_ms_per_text,omitempty"`
	PeakRSSMiB      []float64 `json:"peak_rss_mib"`
	Targets         []target  `json:"targets"`
	OK              bool      `json:"ok"`
	Problems        []string  `json:"problems,omitempty"`
}

// shopCounts reads -shops.
func (o options) shopCounts() ([]int, error) {
	s := o.shops.counts
	if s == "" {
		s = "10000"
		if o.quick {
			s = "50"
		}
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxShops {
			return nil, fmt.Errorf("-shops: %q is not a number of shops from 1 to %d", f, maxShops)
		}
		out = append(out, n)
	}
	return out, nil
}

// shopsScenario runs the scenario once for each size of -shops.
func (h *harness) shopsScenario(ctx context.Context) ([]shopsResult, error) {
	counts, err := h.o.shopCounts()
	if err != nil {
		return nil, err
	}
	so := h.o.shops
	if so.customers < 1 || so.customers > 20 || so.window <= 0 || so.window > 10*time.Minute || so.yesRate <= 0 || so.yesRate > 500 {
		return nil, fmt.Errorf("-shop-customers 1..20, -shops-window up to 10m and -shops-yes-rate up to 500 a second")
	}
	if h.o.quick && so.window == time.Minute {
		so.window = 10 * time.Second
	}
	var out []shopsResult
	for _, n := range counts {
		r, err := h.shopsRun(ctx, n, so)
		if err != nil {
			return out, fmt.Errorf("%d shops: %w", n, err)
		}
		if !h.o.jsonOut {
			r.print(stdout)
		}
		out = append(out, r)
	}
	return out, nil
}

// shopsRun is one size of the scenario.
func (h *harness) shopsRun(ctx context.Context, n int, so shopsOptions) (shopsResult, error) {
	r := shopsResult{Shops: n, CustomersPerShop: so.customers, Instances: len(h.fleet.instances), WindowS: so.window.Seconds(),
		WantTexts: n * so.customers}
	bases := h.fleet.bases()

	// The waves' shops and their customers.
	say("shops %d: creating the shops (%d customers each, 1 text a second)", n, so.customers)
	shops, err := h.makeShops(ctx, n, so.customers, 1)
	if err != nil {
		return r, err
	}
	byShop, err := h.addCustomers(ctx, shops, so.customers)
	if err != nil {
		return r, err
	}
	var recipients []string
	for _, phones := range byShop {
		recipients = append(recipients, phones...)
	}

	// The replying customers: shops at a short code's rate, each with an opening whose
	// offers are all texted (and so claimable) before anything is measured.
	baselineFor := 15 * time.Second
	if h.o.quick {
		baselineFor = 5 * time.Second
	}
	duringFor := so.window + time.Duration(so.customers)*time.Second
	without := int(so.yesRate * baselineFor.Seconds())
	during := int(so.yesRate * duringFor.Seconds())
	replyShops := (without+during)/replyShopCustomers + 1
	say("shops %d: %d shops whose customers reply YES, their offers texted", n, replyShops)
	yesWithout, yesDuring, openings, err := h.replyPool(ctx, replyShops, without)
	if err != nil {
		return r, err
	}
	r.WantBookings = len(openings)

	// The YES path without waves, at the rate it keeps during them.
	say("shops %d: %d YES at %.0f a second, no waves", n, len(yesWithout), so.yesRate)
	if h.drive.Connect(ctx, bases, 64) < 64 {
		return r, fmt.Errorf("could not open 64 connections to %v", bases)
	}
	answersWithout, _ := h.drive.FireAt(ctx, bases, yesWithout, so.yesRate, 256)

	// The waves: declarations spread over the window, YES all along.
	say("shops %d: declaring %d openings over %s while %d YES arrive", n, n, so.window, len(yesDuring))
	waveSenders := map[string]bool{}
	for _, s := range shops {
		waveSenders[s.SMSNumber] = true
	}
	before := h.twilio.count.Load()
	h.twilio.record(true)
	pgPids := h.postgresPids(ctx)
	cpu0, pgCPU0 := cpuTicks(h.fleet.pids()), cpuTicks(pgPids)
	t0 := time.Now()
	var answersDuring []loadkit.Answer
	yesDone := make(chan struct{})
	go func() {
		defer close(yesDone)
		answersDuring, _ = h.drive.FireAt(ctx, bases, yesDuring, so.yesRate, 256)
	}()
	declared, declareErrs := h.declareOver(ctx, shops, so.window)
	r.DeclaredS, r.DeclareErrors = time.Since(t0).Seconds(), declareErrs
	// The waves' texts, and the replies' (none: their answers are TwiML).
	want := before + int64(len(declared)*so.customers)
	limit := so.window + time.Duration(so.customers)*time.Second + 5*time.Minute
	var lastAt time.Time
	select {
	case lastAt = <-h.twilio.when(want):
	case <-time.After(time.Until(t0.Add(limit))):
		say("shops %d: %d of %d texts within %s; measuring what came", n, h.twilio.count.Load()-before, want-before, limit)
	case <-ctx.Done():
		return r, ctx.Err()
	}
	<-yesDone
	// A text sent twice would come after the last expected one: a moment for it.
	time.Sleep(2 * time.Second)
	h.twilio.record(false)
	cpu, pgCPU := cpuTicks(h.fleet.pids())-cpu0, cpuTicks(pgPids)-pgCPU0
	sends := h.twilio.recorded()

	// What the fake saw.
	var waveSends []loadkit.Send
	for _, s := range sends {
		if waveSenders[s.From] {
			waveSends = append(waveSends, s)
		}
	}
	r.Texts = len(waveSends)
	if !lastAt.IsZero() {
		r.WavesS = lastAt.Sub(t0).Seconds()
	} else if len(waveSends) > 0 {
		r.WavesS = waveSends[len(waveSends)-1].At.Sub(t0).Seconds()
	}
	seen := map[string]int{}
	for _, s := range waveSends {
		seen[s.To]++
	}
	for _, phone := range recipients {
		switch c := seen[phone]; {
		case c == 0:
			r.Missing++
		case c > 1:
			r.Duplicates += c - 1
		}
	}
	r.Pace = loadkit.Pace(waveSends, waveSenders, 1, so.slack)
	firsts := loadkit.FirstTexts(waveSends, declared)
	r.FirstText = seconds(firsts)
	for _, d := range firsts {
		if d > time.Second {
			r.FirstOverSecond++
		}
	}
	r.FirstOverSecond += len(declared) - len(firsts) // never texted
	r.LastText = seconds(lastTexts(waveSends, declared))
	if r.Texts > 0 {
		r.CPUPerTextMS = float64(cpu) * 10 / float64(r.Texts)
		if len(pgPids) > 0 {
			r.PgCPUPerTextMS = float64(pgCPU) * 10 / float64(r.Texts)
		}
	}
	r.PeakRSSMiB = peakRSS(h.fleet.pids())

	// The YES path, with and without the waves.
	r.Outcomes = map[string]int{}
	lat := func(as []loadkit.Answer) (latencies, int) {
		var ds []time.Duration
		for _, a := range as {
			r.Outcomes[a.Outcome]++
			if a.Err == nil {
				ds = append(ds, a.Latency)
			}
		}
		return summarize(ds), len(as)
	}
	r.YesWithout, r.YesWithoutN = lat(answersWithout)
	r.YesDuring, r.YesDuringN = lat(answersDuring)
	if r.YesWithout.P99 > 0 {
		r.YesP99Ratio = r.YesDuring.P99 / r.YesWithout.P99
	}
	if err := h.pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE opening_id = ANY($1::uuid[]) AND status IN ('pending_payment', 'confirmed')`,
		openings).Scan(&r.Bookings); err != nil {
		return r, err
	}
	if err := h.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT opening_id FROM bookings WHERE opening_id = ANY($1::uuid[])
		AND status IN ('pending_payment', 'confirmed') GROUP BY opening_id HAVING count(*) > 1) d`, openings).Scan(&r.DoubleBooked); err != nil {
		return r, err
	}
	r.check()
	return r, nil
}

// makeShops creates n shops through the API (their keys declare the openings), 8 at a
// time round robin over the instances: the admin route takes at most 10 requests of one
// address at once (the server's admin guess limit).
func (h *harness) makeShops(ctx context.Context, n, waveSize, sendRate int) ([]loadkit.Shop, error) {
	out := make([]loadkit.Shop, n)
	bases := h.fleet.bases()
	var next atomic.Int64
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range min(8, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				s, err := h.drive.NewShopWith(ctx, bases[i%len(bases)], waveSize, sendRate)
				if err == nil {
					err = h.subscribe(ctx, bases[i%len(bases)], s)
				}
				if err != nil {
					mu.Lock()
					firstErr = cmpOr(firstErr, err)
					mu.Unlock()
					return
				}
				out[i] = s
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("create shops: %w", firstErr)
	}
	return out, ctx.Err()
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// addCustomers adds per opted-in customers to each shop straight into the database (as
// the other scenarios do) and returns their phones by shop id.
func (h *harness) addCustomers(ctx context.Context, shops []loadkit.Shop, per int) (map[string][]string, error) {
	out := make(map[string][]string, len(shops))
	for chunk := range slices.Chunk(shops, 1000) {
		ids := make([]string, len(chunk))
		for i, s := range chunk {
			ids[i] = s.ID
		}
		base := h.drive.Reserve(len(chunk)*per) - 1
		rows, err := h.pool.Query(ctx, `
			INSERT INTO customers (shop_id, phone, name, sms_opt_in, priority, created_at)
			SELECT s.id, '+1666' || lpad(($2::bigint + (s.n - 1) * $3 + i + 1)::text, 8, '0'), 'Load', true, 0, now()
			FROM unnest($1::uuid[]) WITH ORDINALITY AS s(id, n), generate_series(0, $3::int - 1) AS i
			RETURNING shop_id::text, phone`, ids, base, per)
		if err != nil {
			return nil, fmt.Errorf("add customers: %w", err)
		}
		var shop, phone string
		if _, err := pgx.ForEachRow(rows, []any{&shop, &phone}, func() error {
			out[shop] = append(out[shop], phone)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("add customers: %w", err)
		}
	}
	return out, nil
}

// replyPool makes n shops whose customers will reply YES, declares an opening for each,
// waits until every offer is texted and recorded as sent (claimable), and returns the
// replies (the first `first` of them, then the rest, each list shuffled) and the
// openings.
func (h *harness) replyPool(ctx context.Context, n, first int) (a, b []url.Values, openings []string, err error) {
	shops, err := h.makeShops(ctx, n, replyShopCustomers, 1000)
	if err != nil {
		return nil, nil, nil, err
	}
	byShop, err := h.addCustomers(ctx, shops, replyShopCustomers)
	if err != nil {
		return nil, nil, nil, err
	}
	var all []url.Values
	for _, s := range shops {
		for _, p := range byShop[s.ID] {
			all = append(all, h.drive.Yes(p, s.SMSNumber))
		}
	}
	if _, errs := h.declareOver(ctx, shops, 0); errs > 0 {
		return nil, nil, nil, fmt.Errorf("%d of the reply shops' openings could not be declared", errs)
	}
	rows, err := h.pool.Query(ctx, `SELECT o.id::text FROM slot_openings o JOIN shops s ON s.id = o.shop_id WHERE s.sms_number = ANY($1)`, numbers(shops))
	if err != nil {
		return nil, nil, nil, err
	}
	if openings, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, nil, nil, err
	}
	want := len(shops) * replyShopCustomers
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var sent int
		if err := h.pool.QueryRow(ctx, `SELECT count(*) FROM slot_offers WHERE opening_id = ANY($1::uuid[]) AND status = 'sent'`, openings).Scan(&sent); err != nil {
			return nil, nil, nil, err
		}
		if sent >= want {
			break
		}
		if time.Now().After(deadline) {
			return nil, nil, nil, fmt.Errorf("the reply shops' offers: %d of %d texted within 3 minutes", sent, want)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, nil, ctx.Err()
		}
	}
	// A database in service has statistics on its tables (see replies).
	if _, err := h.pool.Exec(ctx, "ANALYZE"); err != nil {
		return nil, nil, nil, fmt.Errorf("analyze: %w", err)
	}
	// The replies of one opening's customers go to the same phase, so each phase books
	// whole openings.
	first = min((first+replyShopCustomers-1)/replyShopCustomers*replyShopCustomers, len(all))
	a, b = slices.Clone(all[:first]), slices.Clone(all[first:])
	rand.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
	rand.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return a, b, openings, nil
}

func numbers(shops []loadkit.Shop) []string {
	out := make([]string, len(shops))
	for i, s := range shops {
		out[i] = s.SMSNumber
	}
	return out
}

// declareOver declares an opening for each shop, evenly over window (all at once, 64 in
// flight, when it is 0), round robin over the instances, and returns when each
// declaration's request left, by the shop's number, and how many failed.
func (h *harness) declareOver(ctx context.Context, shops []loadkit.Shop, window time.Duration) (map[string]time.Time, int) {
	bases := h.fleet.bases()
	declared := make(map[string]time.Time, len(shops))
	var mu sync.Mutex
	var errs atomic.Int64
	sem := make(chan struct{}, 128)
	if window == 0 {
		sem = make(chan struct{}, 64)
	}
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, s := range shops {
		if window > 0 {
			at := t0.Add(window * time.Duration(i) / time.Duration(len(shops)))
			if d := time.Until(at); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
		}
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			if _, err := h.drive.NewOpening(ctx, bases[i%len(bases)], s); err != nil {
				errs.Add(1)
				return
			}
			mu.Lock()
			declared[s.SMSNumber] = start
			mu.Unlock()
		})
	}
	wg.Wait()
	return declared, int(errs.Load())
}

// lastTexts is, for each sender in since, how long after its moment its last text
// arrived.
func lastTexts(sends []loadkit.Send, since map[string]time.Time) []time.Duration {
	last := map[string]time.Time{}
	for _, s := range sends {
		if _, ok := since[s.From]; ok && s.At.After(last[s.From]) {
			last[s.From] = s.At
		}
	}
	out := make([]time.Duration, 0, len(last))
	for k, at := range last {
		out = append(out, at.Sub(since[k]))
	}
	return out
}

// seconds summarises durations in seconds (latencies holds milliseconds elsewhere).
func seconds(ds []time.Duration) latencies {
	l := summarize(ds)
	return latencies{P50: l.P50 / 1000, P90: l.P90 / 1000, P99: l.P99 / 1000, Max: l.Max / 1000}
}

func (r *shopsResult) check() {
	r.OK = true
	fail := func(format string, args ...any) {
		r.OK = false
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
	if r.DeclareErrors > 0 {
		fail("%d openings not declared", r.DeclareErrors)
	}
	if r.Duplicates > 0 {
		fail("%d customers texted twice", r.Duplicates)
	}
	if r.Missing > 0 {
		fail("%d customers never texted", r.Missing)
	}
	if r.Bookings != r.WantBookings {
		fail("%d bookings of the replying shops, want %d", r.Bookings, r.WantBookings)
	}
	if r.DoubleBooked > 0 {
		fail("%d openings booked twice", r.DoubleBooked)
	}
	for o, c := range r.Outcomes {
		if o != "booked" && o != "taken" {
			fail("%d YES answered %q", c, o)
		}
	}
	// The goals (a record of where things stand, not the run's correctness).
	most := func(what string, got, limit float64, unit string) {
		r.Targets = append(r.Targets, target{What: what, Got: got, Limit: limit, Unit: unit, Met: got <= limit})
	}
	most("senders over their rate", float64(r.Pace.Over), 0, "")
	most("shops whose first text took over 1 s", float64(r.FirstOverSecond), 0, "")
	most("YES p99 during ÷ without the waves", r.YesP99Ratio, 1.5, "×")
}

// stdout is where results are printed.
var stdout io.Writer = os.Stdout

func (r shopsResult) print(w io.Writer) {
	status := "ok"
	if !r.OK {
		status = "FAIL: " + strings.Join(r.Problems, "; ")
	}
	fmt.Fprintf(w, "%-10s %d instances  %d shops × %d customers at 1 text/s, declared over %.0fs (%.1f/s; done in %.1fs)\n",
		"shops", r.Instances, r.Shops, r.CustomersPerShop, r.WindowS, float64(r.Shops)/r.WindowS, r.DeclaredS)
	fmt.Fprintf(w, "  texts %d of %d, last %.1fs after the first declaration  duplicates %d  not texted %d\n",
		r.Texts, r.WantTexts, r.WavesS, r.Duplicates, r.Missing)
	fmt.Fprintf(w, "  pace: %d senders, %d over 1 text/s (%d gaps under 1 s less the slack; shortest gap %.3fs)\n",
		r.Pace.Senders, r.Pace.Over, r.Pace.Gaps, r.Pace.MinGap.Seconds())
	fmt.Fprintf(w, "  first text after declaring: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f s  (%d shops over 1 s)\n",
		r.FirstText.P50, r.FirstText.P90, r.FirstText.P99, r.FirstText.Max, r.FirstOverSecond)
	fmt.Fprintf(w, "  last text after declaring:  p50 %.2f  p90 %.2f  p99 %.2f  max %.2f s  (%d texts a shop: at best %d s)\n",
		r.LastText.P50, r.LastText.P90, r.LastText.P99, r.LastText.Max, r.CustomersPerShop, r.CustomersPerShop-1)
	fmt.Fprintf(w, "  YES without waves: %d  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms\n",
		r.YesWithoutN, r.YesWithout.P50, r.YesWithout.P90, r.YesWithout.P99, r.YesWithout.Max)
	fmt.Fprintf(w, "  YES during waves:  %d  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms  (p99 %.2f× without)\n",
		r.YesDuringN, r.YesDuring.P50, r.YesDuring.P90, r.YesDuring.P99, r.YesDuring.Max, r.YesP99Ratio)
	fmt.Fprintf(w, "  server CPU %.3f ms/text  postgres CPU %.3f ms/text (waves and YES together)  peak RSS %v MiB\n",
		r.CPUPerTextMS, r.PgCPUPerTextMS, r.PeakRSSMiB)
	fmt.Fprintf(w, "  outcomes %v  bookings %d (want %d)  double-booked %d  %s\n", r.Outcomes, r.Bookings, r.WantBookings, r.DoubleBooked, status)
	fmt.Fprintf(w, "  targets: %s\n", printTargets(r.Targets))
	fmt.Fprintf(w, "FIGURE shops=%d declared_per_s=%.1f texts=%d waves_s=%.1f senders_over_rate=%d min_gap_s=%.3f first_text_p99_s=%.2f first_text_max_s=%.2f shops_first_over_1s=%d last_text_p99_s=%.2f yes_p99_without_ms=%.1f yes_p99_during_ms=%.1f yes_p99_ratio=%.2f server_cpu_ms_per_text=%.3f postgres_cpu_ms_per_text=%.3f duplicates=%d missing=%d ok=%t\n",
		r.Shops, float64(r.Shops)/r.WindowS, r.Texts, r.WavesS, r.Pace.Over, r.Pace.MinGap.Seconds(), r.FirstText.P99, r.FirstText.Max,
		r.FirstOverSecond, r.LastText.P99, r.YesWithout.P99, r.YesDuring.P99, r.YesP99Ratio, r.CPUPerTextMS, r.PgCPUPerTextMS, r.Duplicates, r.Missing, r.OK)
}

// printShopsTable prints the sizes side by side, with how each figure grew from the
// first size to the last against how the shops grew.
func printShopsTable(w io.Writer, runs []shopsResult) {
	first, last := runs[0], runs[len(runs)-1]
	fmt.Fprintf(w, "\nshops, side by side (growth: last ÷ first, for %.0f× the shops)\n", float64(last.Shops)/float64(first.Shops))
	fmt.Fprintf(w, "  %-34s", "shops")
	for _, r := range runs {
		fmt.Fprintf(w, " %10d", r.Shops)
	}
	fmt.Fprintf(w, " %10s\n", "growth")
	row := func(name string, f func(shopsResult) float64, format string) {
		fmt.Fprintf(w, "  %-34s", name)
		for _, r := range runs {
			fmt.Fprintf(w, " %10s", fmt.Sprintf(format, f(r)))
		}
		if a, b := f(first), f(last); a != 0 {
			fmt.Fprintf(w, " %9.2f×", b/a)
		}
		fmt.Fprintln(w)
	}
	row("declarations/s", func(r shopsResult) float64 { return float64(r.Shops) / r.WindowS }, "%.1f")
	row("texts", func(r shopsResult) float64 { return float64(r.Texts) }, "%.0f")
	row("last text after 1st declaration s", func(r shopsResult) float64 { return r.WavesS }, "%.1f")
	row("senders over rate", func(r shopsResult) float64 { return float64(r.Pace.Over) }, "%.0f")
	row("first text p99 s", func(r shopsResult) float64 { return r.FirstText.P99 }, "%.2f")
	row("first text max s", func(r shopsResult) float64 { return r.FirstText.Max }, "%.2f")
	row("shops first text over 1 s", func(r shopsResult) float64 { return float64(r.FirstOverSecond) }, "%.0f")
	row("last text p99 s", func(r shopsResult) float64 { return r.LastText.P99 }, "%.2f")
	row("YES p99 without waves ms", func(r shopsResult) float64 { return r.YesWithout.P99 }, "%.1f")
	row("YES p99 during waves ms", func(r shopsResult) float64 { return r.YesDuring.P99 }, "%.1f")
	row("YES p99 during ÷ without", func(r shopsResult) float64 { return r.YesP99Ratio }, "%.2f")
	row("server CPU ms/text", func(r shopsResult) float64 { return r.CPUPerTextMS }, "%.3f")
	row("postgres CPU ms/text", func(r shopsResult) float64 { return r.PgCPUPerTextMS }, "%.3f")
}
