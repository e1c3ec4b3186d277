package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
)

type harness struct {
	o      options
	fleet  *fleet
	ideal  *fleet
	twilio *twilioFake
	pool   *pgxpool.Pool
	drive  *loadkit.Driver
	// webhooks, when set, is every shop's webhook endpoint (-webhooks).
	webhooks *webhookReceiver
	// noStatements is set once pg_stat_statements is found missing.
	noStatements bool
	runs         atomic.Int64
}

// sizes are a scenario's numbers.
type sizes struct {
	shops, customersPerShop, inFlight int
	allAtOnce                         bool
	repliesPerCustomer                int
}

func (h *harness) sizes(name string) sizes {
	full := map[string]sizes{
		"race":       {shops: 1, customersPerShop: 1000, allAtOnce: true, repliesPerCustomer: 1},
		"throughput": {shops: 200, customersPerShop: 5, inFlight: 64, repliesPerCustomer: 1},
		"flash":      {shops: 1000, customersPerShop: 10, inFlight: 64, repliesPerCustomer: 1},
		"wave":       {shops: 1, customersPerShop: 1000},
		"warmup":     {shops: 20, customersPerShop: 10, inFlight: 64, repliesPerCustomer: 1},
	}
	quick := map[string]sizes{
		"race":       {shops: 1, customersPerShop: 50, allAtOnce: true, repliesPerCustomer: 1},
		"throughput": {shops: 10, customersPerShop: 5, inFlight: 16, repliesPerCustomer: 1},
		"flash":      {shops: 20, customersPerShop: 10, inFlight: 16, repliesPerCustomer: 1},
		"wave":       {shops: 1, customersPerShop: 50},
		"warmup":     {shops: 2, customersPerShop: 5, inFlight: 8, repliesPerCustomer: 1},
	}
	if h.o.quick {
		return quick[name]
	}
	return full[name]
}

// result is one run of one scenario.
type result struct {
	Scenario  string    `json:"scenario"`
	Instances int       `json:"instances"`
	Replies   int       `json:"replies"`
	InFlight  int       `json:"in_flight"`
	Wall      float64   `json:"wall_s"`
	PerSecond float64   `json:"replies_per_s"`
	Latency   latencies `json:"latency_ms"`
	// ByOutcome is the latency of the answers of each outcome: a winner's path (the
	// claim, the payment link) is not a loser's (a wait for the holder's decision).
	ByOutcome     map[string]latencies `json:"latency_ms_by_outcome"`
	Outcomes      map[string]int
	Bookings      int     `json:"bookings"`
	WantBookings  int     `json:"want_bookings"`
	DoubleBooked  int     `json:"double_booked_openings"`
	CPUPerReplyMS float64 `json:"server_cpu_ms_per_reply"`
	// PostgresCPUPerReplyMS is the CPU of the Postgres backends (when Postgres runs on
	// this machine and its processes can be seen).
	PostgresCPUPerReplyMS float64 `json:"postgres_cpu_ms_per_reply,omitempty"`
	// LoadCPUPerReplyMS is the CPU of this process: the clients, the Twilio fake (which
	// signs and sends Twilio's reports on the answers) and the Stripe stand-in, which in
	// production are Twilio's and Stripe's.
	LoadCPUPerReplyMS float64 `json:"load_cpu_ms_per_reply"`
	// MachineCPUPerReplyMS is every process's CPU on the machine (/proc/stat), and
	// MachineBusy the share of its cores they kept busy: near 1, the cores are the bound.
	MachineCPUPerReplyMS float64 `json:"machine_cpu_ms_per_reply"`
	MachineBusy          float64 `json:"machine_busy"`
	// Statements is Postgres's view of the scenario (pg_stat_statements, when loaded).
	Statements  []statement `json:"statements,omitempty"`
	PeakRSSMiB  []float64
	Ideal       *idealFigures `json:"ideal,omitempty"`
	WaveTexts   int           `json:"wave_texts,omitempty"`
	WaveSeconds float64       `json:"wave_s,omitempty"`
	// WaveFirstSeconds is when the wave's first text reached Twilio, from the
	// declaration: the part of WaveSeconds the sender's rate does not explain.
	WaveFirstSeconds float64 `json:"wave_first_s,omitempty"`
	// Targets are the goals held against this run (full sizes only).
	Targets  []target `json:"targets,omitempty"`
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

type latencies struct {
	P50, P90, P99, Max float64
}

type idealFigures struct {
	Wall      float64   `json:"wall_s"`
	PerSecond float64   `json:"replies_per_s"`
	Latency   latencies `json:"latency_ms"`
	// Runs is how many times the ideal server was driven; the figures above are those
	// of the run with the median wall time, and WallRange is the fastest and slowest
	// run's. One run's time moved 3× between runs on a busy machine, and the race's
	// target is a ratio to it.
	Runs      int        `json:"runs"`
	WallRange [2]float64 `json:"wall_range_s"`
	// CPUPerReplyMS is the ideal server's own CPU per request, over all its runs: what
	// reading one signed form and writing one answer costs on this machine at the least
	// (a YES is two such requests: the text and Twilio's report on its answer).
	CPUPerReplyMS float64 `json:"cpu_ms_per_reply"`
}

// medianIdeal is the ideal server's figures over several runs: the run with the
// median wall time, and the range of the walls.
func medianIdeal(runs []idealFigures) *idealFigures {
	if len(runs) == 0 {
		return nil
	}
	sorted := slices.SortedFunc(slices.Values(runs), func(a, b idealFigures) int { return cmp.Compare(a.Wall, b.Wall) })
	m := sorted[len(sorted)/2]
	m.Runs, m.WallRange = len(sorted), [2]float64{sorted[0].Wall, sorted[len(sorted)-1].Wall}
	return &m
}

// storeHistory stores n past inbound texts, answered, received over the last 29 days
// (inside the default 30 days' retention), from numbers that are nobody's customer. A
// database in service holds weeks of them, and the planner plans for that; a run that
// starts empty measured the plans of a table of a few pages (a sequential scan per
// batch of marks, 2 ms at 10,000 rows against 0.4 ms by the key), cached while the
// table grew a hundredfold within one storm, which production meets only on its first
// day, and then for about a minute, until autovacuum's analyze.
func (h *harness) storeHistory(ctx context.Context, n int) error {
	_, err := h.pool.Exec(ctx, `
		INSERT INTO inbound_messages (message_sid, from_phone, to_phone, body, received_at,
			outcome, reply, handled_at, answered_at)
		SELECT 'SMhistory' || lpad(i::text, 24, '0'), '+1555' || lpad((i % 10000000)::text, 7, '0'),
			'+15550000000', 'YES', t, 'taken', '', t, t
		FROM generate_series(1, $1::int) AS i,
			LATERAL (SELECT now() - interval '29 days' * i / $1::int AS t) AS past`, n)
	return err
}

func (h *harness) warmUp(ctx context.Context) error {
	_, err := h.replies(ctx, "warmup")
	return err
}

func (h *harness) scenario(ctx context.Context, name string) (result, error) {
	switch name {
	case "race", "throughput", "flash":
		return h.replies(ctx, name)
	case "wave":
		return h.wave(ctx)
	}
	return result{}, fmt.Errorf("unknown scenario %q (race, throughput, flash, wave)", name)
}

// customers adds n opted-in customers straight into the database (the API is not what
// is measured, and thousands are needed quickly) and returns their phones.
func (h *harness) customers(ctx context.Context, shop loadkit.Shop, n int) ([]string, error) {
	base := h.drive.Reserve(n) - 1
	rows, err := h.pool.Query(ctx, `
		INSERT INTO customers (shop_id, phone, name, sms_opt_in, priority, created_at)
		SELECT $1::uuid, '+1666' || lpad(($2::bigint + i)::text, 8, '0'), 'Load ' || i, true, 0, now()
		FROM generate_series(1, $3::int) AS i
		RETURNING phone`, shop.ID, base, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// reply is one signed inbound text.
type reply struct {
	form url.Values
}

func (h *harness) yes(from, to string) reply { return reply{form: h.drive.Yes(from, to)} }

// replies runs a scenario of YES storms: shops, customers and one opening each; once
// every offer is texted, every customer replies YES.
func (h *harness) replies(ctx context.Context, name string) (result, error) {
	sz := h.sizes(name)
	r := result{Scenario: name, Instances: len(h.fleet.instances)}
	before := h.twilio.count.Load()
	var all []reply
	var openings []string
	for range sz.shops {
		shop, err := h.drive.NewShop(ctx, h.fleet.instances[0].Base, sz.customersPerShop)
		if err != nil {
			return r, err
		}
		if err := h.subscribe(ctx, h.fleet.instances[0].Base, shop); err != nil {
			return r, err
		}
		phones, err := h.customers(ctx, shop, sz.customersPerShop)
		if err != nil {
			return r, err
		}
		op, err := h.drive.NewOpening(ctx, h.fleet.instances[0].Base, shop)
		if err != nil {
			return r, err
		}
		openings = append(openings, op)
		for _, p := range phones {
			all = append(all, h.yes(p, shop.SMSNumber))
		}
	}
	want := before + int64(sz.shops*sz.customersPerShop)
	select {
	case <-h.twilio.when(want):
	case <-time.After(3 * time.Minute):
		return r, fmt.Errorf("offers not all texted within 3 minutes: %d of %d", h.twilio.count.Load()-before, want-before)
	case <-ctx.Done():
		return r, ctx.Err()
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	inFlight := sz.inFlight
	if sz.allAtOnce {
		inFlight = len(all)
	}
	r.Replies, r.InFlight, r.WantBookings = len(all), inFlight, len(openings)

	// A database in service has statistics on its tables; this one was filled a moment
	// ago, and until autovacuum's analyze happens to run, the planner guesses: some runs
	// measured plans no production database would use.
	if _, err := h.pool.Exec(ctx, "ANALYZE"); err != nil {
		return r, fmt.Errorf("analyze: %w", err)
	}
	h.resetStatements(ctx)
	pgPids := h.postgresPids(ctx)
	cpu0, pgCPU0, load0 := cpuTicks(h.fleet.pids()), cpuTicks(pgPids), cpuTicks([]int{os.Getpid()})
	busy0, all0 := machineTicks()
	stopProfiles := h.profile(ctx, name)
	stopDuring := h.runDuring(name)
	lat, outcomes, byOutcome, wall, err := h.fire(ctx, h.fleet.bases(), all, inFlight)
	stopDuring()
	stopProfiles()
	if err != nil {
		return r, err
	}
	cpu, pgCPU, load := cpuTicks(h.fleet.pids())-cpu0, cpuTicks(pgPids)-pgCPU0, cpuTicks([]int{os.Getpid()})-load0
	busy1, all1 := machineTicks()
	r.Wall, r.PerSecond, r.Latency, r.Outcomes = wall.Seconds(), float64(len(all))/wall.Seconds(), summarize(lat), outcomes
	r.ByOutcome = map[string]latencies{}
	for o, l := range byOutcome {
		r.ByOutcome[o] = summarize(l)
	}
	r.CPUPerReplyMS = float64(cpu) * 10 / float64(len(all)) // USER_HZ is 100 on Linux: a tick is 10 ms
	if len(pgPids) > 0 {
		r.PostgresCPUPerReplyMS = float64(pgCPU) * 10 / float64(len(all))
	}
	r.LoadCPUPerReplyMS = float64(load) * 10 / float64(len(all))
	r.MachineCPUPerReplyMS = float64(busy1-busy0) * 10 / float64(len(all))
	if all1 > all0 {
		r.MachineBusy = float64(busy1-busy0) / float64(all1-all0)
	}
	r.Statements = h.topStatements(ctx, len(all))
	r.PeakRSSMiB = peakRSS(h.fleet.pids())

	// The same requests (new MessageSids), the same client and concurrency, to the ideal
	// server, several times: the ratios are to its median run.
	var ideal []idealFigures
	idealCPU0, idealSent := cpuTicks(h.ideal.pids()), 0
	for range max(h.o.idealRuns, 1) {
		var again []reply
		for _, x := range all {
			again = append(again, h.yes(x.form.Get("From"), x.form.Get("To")))
		}
		ilat, _, _, iwall, err := h.fire(ctx, h.ideal.bases(), again, inFlight)
		if err != nil {
			return r, fmt.Errorf("ideal server: %w", err)
		}
		ideal = append(ideal, idealFigures{Wall: iwall.Seconds(), PerSecond: float64(len(again)) / iwall.Seconds(), Latency: summarize(ilat)})
		idealSent += len(again)
	}
	r.Ideal = medianIdeal(ideal)
	if r.Ideal != nil && idealSent > 0 {
		r.Ideal.CPUPerReplyMS = float64(cpuTicks(h.ideal.pids())-idealCPU0) * 10 / float64(idealSent)
	}

	// What Postgres says: exactly one live booking per opening, none twice.
	err = h.pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE opening_id = ANY($1::uuid[]) AND status IN ('pending_payment', 'confirmed')`, openings).Scan(&r.Bookings)
	if err != nil {
		return r, err
	}
	err = h.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT opening_id FROM bookings WHERE opening_id = ANY($1::uuid[])
		AND status IN ('pending_payment', 'confirmed') GROUP BY opening_id HAVING count(*) > 1) d`, openings).Scan(&r.DoubleBooked)
	if err != nil {
		return r, err
	}
	r.check()
	return r, nil
}

func (r *result) check() {
	r.OK = true
	fail := func(format string, args ...any) {
		r.OK = false
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
	if r.Scenario == "wave" {
		if r.WaveTexts < r.WantBookings {
			fail("only %d of %d texts", r.WaveTexts, r.WantBookings)
		}
		return
	}
	if r.Bookings != r.WantBookings {
		fail("%d bookings, want %d", r.Bookings, r.WantBookings)
	}
	if r.DoubleBooked != 0 {
		fail("%d openings booked twice", r.DoubleBooked)
	}
	if r.Outcomes["booked"] != r.WantBookings {
		fail("%d answered booked, want %d", r.Outcomes["booked"], r.WantBookings)
	}
	for o, n := range r.Outcomes {
		if o != "booked" && o != "taken" {
			fail("%d answered %q", n, o)
		}
	}
}

// fire sends the replies round robin over bases, inFlight at a time, and returns each
// one's latency, the outcomes, the latencies of each outcome and the wall time to the
// last answer.
func (h *harness) fire(ctx context.Context, bases []string, replies []reply, inFlight int) ([]time.Duration, map[string]int, map[string][]time.Duration, time.Duration, error) {
	forms := make([]url.Values, len(replies))
	for i, r := range replies {
		forms[i] = r.form
	}
	// The server and the ideal server alike meet the run with a connection open for
	// every request in flight: what is measured is the YES, not how fast this machine
	// opens a thousand TCP connections (the first of several ideal runs, which opened
	// them, took up to three times as long as the others).
	if n := min(inFlight, len(forms)); h.drive.Connect(ctx, bases, n) < n {
		return nil, nil, nil, 0, fmt.Errorf("could not open %d connections to %v", n, bases)
	}
	answers, wall := h.drive.Fire(ctx, bases, forms, inFlight, false)
	lat := make([]time.Duration, len(answers))
	outcomes := map[string]int{}
	byOutcome := map[string][]time.Duration{}
	var firstErr error
	for i, a := range answers {
		lat[i] = a.Latency
		outcomes[a.Outcome]++
		byOutcome[a.Outcome] = append(byOutcome[a.Outcome], a.Latency)
		if a.Err != nil && firstErr == nil {
			firstErr = a.Err
		}
	}
	if firstErr != nil {
		return lat, outcomes, byOutcome, wall, fmt.Errorf("a request failed: %w", firstErr)
	}
	return lat, outcomes, byOutcome, wall, nil
}

// waveSendRate is the wave scenario's sender: texts a second (a short code's class).
const waveSendRate = 1000

// wave declares one opening for a shop with many eligible customers and times the texts.
func (h *harness) wave(ctx context.Context) (result, error) {
	sz := h.sizes("wave")
	r := result{Scenario: "wave", Instances: len(h.fleet.instances), WantBookings: sz.customersPerShop}
	shop, err := h.drive.NewShopWith(ctx, h.fleet.instances[0].Base, sz.customersPerShop, waveSendRate)
	if err != nil {
		return r, err
	}
	if err := h.subscribe(ctx, h.fleet.instances[0].Base, shop); err != nil {
		return r, err
	}
	if _, err := h.customers(ctx, shop, sz.customersPerShop); err != nil {
		return r, err
	}
	before := h.twilio.count.Load()
	first, done := h.twilio.when(before+1), h.twilio.when(before+int64(sz.customersPerShop))
	cpu0 := cpuTicks(h.fleet.pids())
	stopProfiles := h.profile(ctx, "wave")
	t0 := time.Now()
	if _, err := h.drive.NewOpening(ctx, h.fleet.instances[0].Base, shop); err != nil {
		return r, err
	}
	select {
	case at := <-done:
		r.WaveSeconds = at.Sub(t0).Seconds()
		r.WaveFirstSeconds = (<-first).Sub(t0).Seconds()
	case <-time.After(2 * time.Minute):
		stopProfiles()
		return r, fmt.Errorf("the wave texted %d of %d within 2 minutes", h.twilio.count.Load()-before, sz.customersPerShop)
	}
	stopProfiles()
	r.WaveTexts = int(h.twilio.count.Load() - before)
	r.CPUPerReplyMS = float64(cpuTicks(h.fleet.pids())-cpu0) * 10 / float64(r.WaveTexts)
	r.PeakRSSMiB = peakRSS(h.fleet.pids())
	r.check()
	return r, nil
}

// profile takes a CPU profile of every instance while a scenario runs, and its heap
// once stop is called (with -pprof).
func (h *harness) profile(ctx context.Context, name string) (stop func()) {
	if h.o.pprofDir == "" {
		return func() {}
	}
	run := h.runs.Add(1)
	// A CPU profile is written only when its time is up: long enough for the scenario.
	seconds := map[string]int{"race": 4, "throughput": 6, "flash": 20, "wave": 4}[name]
	if err := os.MkdirAll(h.o.pprofDir, 0o755); err != nil {
		say("profile directory: %v", err)
		return func() {}
	}
	var wg sync.WaitGroup
	for i, addr := range h.fleet.pprofs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := filepath.Join(h.o.pprofDir, fmt.Sprintf("%s-%d-instance-%d.pprof", name, run, i+1))
			if err := fetchTo(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds), p); err != nil {
				say("profile of instance %d: %v", i+1, err)
			}
		}()
	}
	// And this process's own (the clients, the Twilio fake, the Stripe stand-in): its CPU
	// shares the cores with the instances'.
	self := filepath.Join(h.o.pprofDir, fmt.Sprintf("%s-%d-load.pprof", name, run))
	selfFile, err := os.Create(self)
	if err == nil {
		if err = pprof.StartCPUProfile(selfFile); err != nil {
			selfFile.Close()
			selfFile = nil
		}
	}
	if err != nil {
		say("profile of the load: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // let the profiles start
	return func() {
		if selfFile != nil {
			pprof.StopCPUProfile()
			selfFile.Close()
		}
		wg.Wait()
		// And what each instance holds afterwards (after a GC), to tell a leak from a
		// peak: peak RSS is a high-water mark over the instance's life.
		for i, addr := range h.fleet.pprofs {
			p := filepath.Join(h.o.pprofDir, fmt.Sprintf("%s-%d-instance-%d.heap", name, run, i+1))
			if err := fetchTo(ctx, fmt.Sprintf("http://%s/debug/pprof/heap?gc=1&debug=1", addr), p); err != nil {
				say("heap profile of instance %d: %v", i+1, err)
			}
		}
	}
}

// runDuring starts -during's command for scenario name and returns what interrupts it
// and waits for it to end.
func (h *harness) runDuring(name string) (stop func()) {
	if h.o.during == "" {
		return func() {}
	}
	cmd := exec.Command("sh", "-c", h.o.during)
	cmd.Env = append(os.Environ(), "SCENARIO="+name)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		say("-during: %v", err)
		return func() {}
	}
	time.Sleep(200 * time.Millisecond) // let it start
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
}

// fetchTo writes what a GET of url answers into the file at path.
func fetchTo(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func summarize(d []time.Duration) latencies {
	var ok []time.Duration
	for _, x := range d {
		if x > 0 {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return latencies{}
	}
	slices.Sort(ok)
	return latencies{P50: ms(percentile(ok, 50)), P90: ms(percentile(ok, 90)), P99: ms(percentile(ok, 99)), Max: ms(ok[len(ok)-1])}
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 × n)
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTicks sums the user and system CPU time of the processes, in clock ticks.
func cpuTicks(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The command name (field 2) may hold spaces; fields after its ")" are plain.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		// utime and stime are fields 14 and 15 of the whole line: 12 and 13 here.
		if len(fields) > 13 {
			u, _ := strconv.ParseInt(fields[11], 10, 64)
			st, _ := strconv.ParseInt(fields[12], 10, 64)
			total += u + st
		}
	}
	return total
}

// machineTicks returns the machine's busy and total CPU ticks so far, all cores
// (/proc/stat's first line: iowait and idle are not busy).
func machineTicks() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseInt(f, 10, 64)
		if i >= 8 { // guest and guest_nice are counted in user already
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

// peakRSS returns each process's peak resident set (VmHWM), in MiB.
func peakRSS(pids []int) []float64 {
	var out []float64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
				out = append(out, float64(int(kb/1024*10))/10)
			}
		}
	}
	return out
}

func (r result) print(w io.Writer) {
	status := "ok"
	if !r.OK {
		status = "FAIL: " + strings.Join(r.Problems, "; ")
	}
	if r.Scenario == "wave" {
		fmt.Fprintf(w, "%-10s %d instances  %d texts in %.3fs (%.0f/s; the first after %.3fs, %.0f/s from it)  server CPU %.3f ms/text  peak RSS %v MiB  %s\n",
			r.Scenario, r.Instances, r.WaveTexts, r.WaveSeconds, float64(r.WaveTexts)/r.WaveSeconds, r.WaveFirstSeconds,
			float64(r.WaveTexts-1)/max(r.WaveSeconds-r.WaveFirstSeconds, 1e-9), r.CPUPerReplyMS, r.PeakRSSMiB, status)
		if len(r.Targets) > 0 {
			fmt.Fprintf(w, "  targets: %s\n", printTargets(r.Targets))
		}
		return
	}
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f×", a/b)
	}
	fmt.Fprintf(w, "%-10s %d instances  %d YES, %d in flight\n", r.Scenario, r.Instances, r.Replies, r.InFlight)
	fmt.Fprintf(w, "  server: last answer %.3fs  %.0f replies/s  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms\n",
		r.Wall, r.PerSecond, r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.Max)
	fmt.Fprintf(w, "  ideal:  last answer %.3fs  %.0f replies/s  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms  (median of %d runs: %.3f–%.3fs)  CPU %.3f ms/request\n",
		r.Ideal.Wall, r.Ideal.PerSecond, r.Ideal.Latency.P50, r.Ideal.Latency.P90, r.Ideal.Latency.P99, r.Ideal.Latency.Max,
		r.Ideal.Runs, r.Ideal.WallRange[0], r.Ideal.WallRange[1], r.Ideal.CPUPerReplyMS)
	fmt.Fprintf(w, "  ratio:  wall %s  p99 %s   server CPU %.3f ms/YES  peak RSS %v MiB\n",
		ratio(r.Wall, r.Ideal.Wall), ratio(r.Latency.P99, r.Ideal.Latency.P99), r.CPUPerReplyMS, r.PeakRSSMiB)
	if r.PostgresCPUPerReplyMS > 0 {
		fmt.Fprintf(w, "  postgres CPU %.3f ms/YES\n", r.PostgresCPUPerReplyMS)
	}
	fmt.Fprintf(w, "  load CPU %.3f ms/YES (clients, Twilio fake, Stripe stand-in)  machine CPU %.3f ms/YES, cores %.0f%% busy\n",
		r.LoadCPUPerReplyMS, r.MachineCPUPerReplyMS, 100*r.MachineBusy)
	for _, o := range slices.Sorted(maps.Keys(r.ByOutcome)) {
		l := r.ByOutcome[o]
		fmt.Fprintf(w, "  %-7s p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms\n", o+":", l.P50, l.P90, l.P99, l.Max)
	}
	for _, st := range r.Statements {
		fmt.Fprintf(w, "  pg %6.3f calls/YES %7.1f ms total %6.3f ms mean  %s\n", st.CallsPerReply, st.TotalMS, st.MeanMS, st.Query)
	}
	fmt.Fprintf(w, "  outcomes %v  bookings %d (want %d)  double-booked %d  %s\n", r.Outcomes, r.Bookings, r.WantBookings, r.DoubleBooked, status)
	if len(r.Targets) > 0 {
		fmt.Fprintf(w, "  targets: %s\n", printTargets(r.Targets))
	}
}
