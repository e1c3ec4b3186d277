// Command loadtest measures the YES path and the offer wave the way customers meet them:
// several real server instances on the local Postgres and Redis, a fake Twilio that
// counts texts, a Stripe stand-in that answers Checkout creates at once, and inbound
// texts signed exactly as Twilio signs them, sent round robin. In the same run it sends
// the same requests to an ideal server (a separate process that only reads the form and
// answers a fixed TwiML), so each figure also reads as a ratio to this machine's ceiling.
//
//	go run ./cmd/loadtest                        # every scenario, 3 instances
//	go run ./cmd/loadtest -scenario race -repeat 3
//	go run ./cmd/loadtest -quick                 # tiny sizes, a smoke test in seconds
//	go run ./cmd/loadtest -webhooks slow         # every shop with a webhook endpoint answering after 5 s (fast: at once; huge: 10 MiB)
//
// It creates its own database (slotrec_load_<pid>) and Redis key prefix and removes
// both at the end; it sends traffic to loopback only and stops by itself.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// The Twilio credentials the instances are given; the load tool's own fake Twilio
// takes any.
const (
	accountSID = "AC00000000000000000000000000000000"
	authToken  = "loadtestauthtoken0123456789abcdef"
)

type options struct {
	instances   int
	scenarios   string
	repeat      int
	idealRuns   int
	quick       bool
	databaseURL string
	redisURL    string
	poolConns   int
	pprofDir    string
	during      string
	jsonOut     bool
	logDir      string
	keep        bool
	history     int
	shops       shopsOptions
	// webhooks gives every shop an outbound webhook endpoint at a local receiver that
	// answers slowly or hugely ("" none).
	webhooks     string
	webhookDelay time.Duration
	webhookSize  int
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "ideal" {
		serveIdeal(os.Args[2])
		return
	}
	var o options
	flag.IntVar(&o.instances, "instances", 3, "server instances")
	flag.StringVar(&o.scenarios, "scenario", "all", "race, throughput, flash, wave, shops or all (comma-separated; all is the first four)")
	flag.IntVar(&o.repeat, "repeat", 1, "runs of each scenario")
	flag.IntVar(&o.idealRuns, "ideal-runs", 5, "runs of the ideal server after each scenario's run (its figures are the median run's)")
	flag.BoolVar(&o.quick, "quick", false, "tiny sizes (a smoke test)")
	flag.StringVar(&o.databaseURL, "database-url", envOr("LOADTEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "an admin connection to the Postgres to use; a database is created on it")
	flag.StringVar(&o.redisURL, "redis-url", envOr("LOADTEST_REDIS_URL", "redis://127.0.0.1:6379/0"), "the Redis to use (keys under a prefix of the run's own)")
	flag.IntVar(&o.poolConns, "pool", 0, "pool_max_conns per instance (0: the server's default)")
	flag.StringVar(&o.during, "during", "", "a shell command run while each scenario's replies are sent (SCENARIO in its environment), interrupted when they end: perf record -a, say")
	flag.StringVar(&o.pprofDir, "pprof", "", "write a CPU profile of every instance (and of this process) during each scenario, and each instance's heap after it, into this directory")
	flag.BoolVar(&o.jsonOut, "json", false, "print the results as JSON")
	flag.StringVar(&o.logDir, "logs", "", "where the instances' logs go (default: a temporary directory)")
	flag.BoolVar(&o.keep, "keep", false, "keep the run's database afterwards, to look into it")
	flag.IntVar(&o.history, "history", 100_000, "past inbound texts stored before the warm-up, as a database in service holds (0: none)")
	flag.StringVar(&o.shops.counts, "shops", "", "the shops scenario's sizes, comma-separated, each run in turn (default 10000; 50 with -quick; at most 20000)")
	flag.IntVar(&o.shops.customers, "shop-customers", 3, "shops scenario: customers of each shop (each texted once)")
	flag.DurationVar(&o.shops.window, "shops-window", time.Minute, "shops scenario: the openings are declared evenly over this long")
	flag.Float64Var(&o.shops.yesRate, "shops-yes-rate", 20, "shops scenario: YES replies a second, before and during the waves")
	flag.DurationVar(&o.shops.slack, "pace-slack", 250*time.Millisecond, "shops scenario: jitter allowed between two texts of one sender (a long code's are 1 s apart)")
	flag.StringVar(&o.webhooks, "webhooks", "", "give every shop a webhook endpoint at a local receiver that answers at once (fast), slowly (slow) or hugely (huge), to compare the YES path with and without")
	flag.DurationVar(&o.webhookDelay, "webhook-delay", 5*time.Second, "-webhooks slow: how long the receiver waits before it answers")
	flag.IntVar(&o.webhookSize, "webhook-size", 10<<20, "-webhooks huge: how many bytes the receiver answers")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute) // bounded, whatever happens
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, o options) (err error) {
	work, err := os.MkdirTemp("", "slotrec-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.logDir == "" {
		o.logDir = work
	}

	say("building the server and the ideal server")
	bin := filepath.Join(work, "server")
	if err := loadkit.Build(ctx, bin); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	db, err := loadkit.NewDatabase(ctx, o.databaseURL, fmt.Sprintf("slotrec_load_%d", os.Getpid()), say)
	if err != nil {
		return err
	}
	if o.keep {
		say("keeping database %s (-keep): drop it with DROP DATABASE %s", db.Name, db.Name)
	} else {
		defer db.Drop()
	}
	prefix := "loadtest:" + randomHex(6) + ":"
	rdb, err := newRedis(ctx, o.redisURL)
	if err != nil {
		return err
	}
	defer cleanRedis(rdb, prefix)

	tw, err := startTwilio()
	if err != nil {
		return err
	}
	defer tw.close()
	var receiver *webhookReceiver
	if o.webhooks != "" {
		if receiver, err = startWebhookReceiver(o.webhooks, o.webhookDelay, o.webhookSize); err != nil {
			return err
		}
		defer func() { say("%s", receiver.describe()) }()
		defer receiver.close()
	}
	st, err := loadkit.StartStripe()
	if err != nil {
		return err
	}
	defer st.Close()

	fleet, err := startFleet(ctx, o, bin, loadkit.Env{
		DatabaseURL: db.URL, RedisURL: o.redisURL, KeyPrefix: prefix, TwilioURL: tw.url,
		TwilioSID: accountSID, TwilioToken: authToken, StripeURL: st.URL, Overrides: loadkit.InboundOverrides,
	})
	if err != nil {
		return err
	}
	defer fleet.stop()
	ideal, err := startIdeal(ctx, self, o.logDir)
	if err != nil {
		return err
	}
	defer ideal.stop()

	overrides, err := loadkit.ParseOverrides(loadkit.InboundOverrides)
	if err != nil {
		return err
	}
	h := &harness{o: o, fleet: fleet, ideal: ideal, twilio: tw, pool: db.Pool, webhooks: receiver,
		drive: &loadkit.Driver{Client: loadkit.NewClient(), AccountSID: accountSID, AuthToken: authToken, Overrides: &overrides,
			CheckReport: func(form url.Values) { tw.violate(tw.contract.CheckStatusCallback(form)) }}}
	if o.history > 0 && !o.quick {
		say("storing %d past texts", o.history)
		if err := h.storeHistory(ctx, o.history); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	say("warming up")
	if err := h.warmUp(ctx); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}

	var results []result
	var shopRuns []shopsResult
	for _, name := range scenarioNames(o.scenarios) {
		if name == "shops" {
			runs, err := h.shopsScenario(ctx)
			if err != nil {
				return fmt.Errorf("shops: %w", err)
			}
			shopRuns = append(shopRuns, runs...)
			continue
		}
		for i := range o.repeat {
			r, err := h.scenario(ctx, name)
			if err != nil {
				return fmt.Errorf("%s (run %d): %w", name, i+1, err)
			}
			if !o.quick && r.Instances == 3 {
				r.Targets = targets(r) // the goals are for three instances
			}
			results = append(results, r)
			if !o.jsonOut {
				r.print(os.Stdout)
			}
		}
	}
	// Every request the instances sent the fake Twilio, and its answers, were held to
	// Twilio's OpenAPI documents; a breach fails the run like a failed check.
	var contractErr error
	if vs := tw.violations(); len(vs) > 0 {
		say("%d request(s) or answer(s) of the fake Twilio broke Twilio's API contract:\n%s", len(vs), twiliofake.Summary(vs, 20))
		contractErr = fmt.Errorf("%d request(s) or answer(s) of the fake Twilio broke Twilio's API contract (see above)", len(vs))
	}
	if o.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if len(shopRuns) > 0 {
			return cmp.Or(enc.Encode(map[string]any{"scenarios": results, "shops": shopRuns}), contractErr)
		}
		return cmp.Or(enc.Encode(results), contractErr)
	}
	if len(shopRuns) > 1 {
		printShopsTable(os.Stdout, shopRuns)
	}
	failed := 0
	for _, r := range results {
		if !r.OK {
			failed++
		}
	}
	for _, r := range shopRuns {
		if !r.OK {
			failed++
		}
	}
	if failed > 0 {
		return errors.Join(fmt.Errorf("%d scenario run(s) FAILED their correctness checks (see above)", failed), contractErr)
	}
	return contractErr
}

func scenarioNames(s string) []string {
	if s == "all" {
		return []string{"race", "throughput", "flash", "wave"}
	}
	return strings.Split(s, ",")
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "loadtest: "+format+"\n", args...)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// --- Redis ------------------------------------------------------------------------

func newRedis(ctx context.Context, u string) (*redis.Client, error) {
	opt, err := redis.ParseURL(u)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("connect to Redis (%s): %w; start it, or pass -redis-url", u, err)
	}
	return rdb, nil
}

// cleanRedis deletes this run's keys only.
func cleanRedis(rdb *redis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
	_ = rdb.Close()
}

// --- the server instances ------------------------------------------------------------

type fleet struct {
	instances []*loadkit.Process
	pprofs    []string // each instance's PPROF_ADDR, with -pprof
}

func startFleet(ctx context.Context, o options, bin string, env loadkit.Env) (*fleet, error) {
	f := &fleet{}
	if o.poolConns > 0 {
		env.DatabaseURL += fmt.Sprintf("&pool_max_conns=%d", o.poolConns)
	}
	if extra := os.Getenv("LOADTEST_DB_PARAMS"); extra != "" {
		env.DatabaseURL += "&" + extra
	}
	env.Extra = strings.Fields(os.Getenv("LOADTEST_SERVER_ENV"))
	if !slices.ContainsFunc(env.Extra, func(kv string) bool { return strings.HasPrefix(kv, "GOMAXPROCS=") }) {
		env.Extra = append(env.Extra, "GOMAXPROCS="+strconv.Itoa(shareOfCores(runtime.NumCPU(), o.instances)))
	}
	if o.webhooks != "" {
		// The receiver is plain http on loopback.
		env.Extra = append(env.Extra, "DEV_MODE=1", "WEBHOOK_ALLOW_PRIVATE=1")
	}
	if err := loadkit.Migrate(ctx, bin, env); err != nil {
		return nil, err
	}
	logPath := func(i int) string { return filepath.Join(o.logDir, fmt.Sprintf("instance-%d.log", i+1)) }
	for i := range o.instances {
		var err error
		if env.Addr, err = loadkit.FreePort(); err != nil {
			return nil, err
		}
		env.Pprof = ""
		if o.pprofDir != "" {
			if env.Pprof, err = loadkit.FreePort(); err != nil {
				return nil, err
			}
		}
		in, err := loadkit.StartServer(bin, env, logPath(i))
		if err != nil {
			f.stop()
			return nil, fmt.Errorf("instance %d: %w", i+1, err)
		}
		f.instances = append(f.instances, in)
		f.pprofs = append(f.pprofs, env.Pprof)
	}
	for i, in := range f.instances {
		if err := in.WaitReady(ctx, in.Base+"/readyz", time.Minute); err != nil {
			f.stop()
			return nil, fmt.Errorf("instance %d: %w (its log: %s)", i+1, err, logPath(i))
		}
	}
	procs := "GOMAXPROCS unset"
	for _, kv := range env.Extra {
		if strings.HasPrefix(kv, "GOMAXPROCS=") {
			procs = kv
		}
	}
	say("%d instances ready, each with %s (logs in %s)", len(f.instances), procs, o.logDir)
	return f, nil
}

func (f *fleet) stop() {
	var wg sync.WaitGroup
	for _, in := range f.instances {
		wg.Go(func() { in.Stop(30 * time.Second) })
	}
	wg.Wait()
}

// pids returns the instances' process ids.
func (f *fleet) pids() []int {
	var out []int
	for _, in := range f.instances {
		out = append(out, in.Pid())
	}
	return out
}

func (f *fleet) bases() []string {
	var out []string
	for _, in := range f.instances {
		out = append(out, in.Base)
	}
	return out
}

// shareOfCores is each instance's GOMAXPROCS: its share of the machine's cores, at
// least one. Instances in service run in containers with a CPU limit, from which Go
// sets GOMAXPROCS itself (Go 1.25); three instances sharing two cores each with two
// processors spent the difference in idle processors spinning for work (server CPU per
// YES in flash 0.445 ms with 1 against 0.575 with 2, one pair, 2026-11-29).
// LOADTEST_SERVER_ENV="GOMAXPROCS=n" overrides it.
func shareOfCores(cores, instances int) int {
	return max(1, cores/max(1, instances))
}

// --- the ideal server ------------------------------------------------------------------

// idealTwiML is what the ideal server answers: what a real answer looks like, fixed.
const idealTwiML = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
	`<Response><Message>Joe&#39;s Barbers: sorry, that slot was just taken. We&#39;ll text you when another opens up.</Message></Response>`

// serveIdeal is the ideal server's process: it reads the form and answers fixed TwiML.
func serveIdeal(addr string) {
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, "ok") // a body: see loadkit's Connect
			return
		}
		if err := r.ParseForm(); err != nil || r.PostForm.Get("MessageSid") == "" {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.Header().Set("X-Slot-Outcome", "taken")
		_, _ = io.WriteString(w, idealTwiML)
	})}
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, os.Interrupt)
		<-ch
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "ideal:", err)
		os.Exit(1)
	}
}

func startIdeal(ctx context.Context, self, logDir string) (*fleet, error) {
	addr, err := loadkit.FreePort()
	if err != nil {
		return nil, err
	}
	in, err := loadkit.Start(self, []string{"ideal", addr}, nil, filepath.Join(logDir, "ideal.log"))
	if err != nil {
		return nil, err
	}
	in.Base = "http://" + addr
	f := &fleet{instances: []*loadkit.Process{in}}
	if err := in.WaitReady(ctx, in.Base+"/", time.Minute); err != nil {
		f.stop()
		return nil, fmt.Errorf("ideal server: %w", err)
	}
	return f, nil
}

// --- a fake of Twilio's REST API ------------------------------------------------------

// twilioFake accepts every message, answers at once and counts them. Unlike the tests'
// twiliofake it keeps nothing but counts (and sends while recording), to stay out of the
// figures' way; like it, it holds every request and answer to Twilio's OpenAPI documents
// (about 40 µs a text) and keeps what breaks them for the end of the run. A request that
// breaks them is still accepted, so that the scenarios run to the end and say so.
type twilioFake struct {
	srv      *http.Server
	url      string
	count    atomic.Int64
	seq      atomic.Int64
	contract *twiliofake.Contract

	violationsMu sync.Mutex
	broken       []twiliofake.Violation

	mu      sync.Mutex
	waiting []countWaiter

	// recording, while set, keeps each accepted text's sender, recipient and arrival
	// (the shops scenario's pacing checks).
	recording atomic.Bool
	sendsMu   sync.Mutex
	sends     []loadkit.Send
}

type countWaiter struct {
	n  int64
	ch chan time.Time
}

func startTwilio() (*twilioFake, error) {
	contract, err := twiliofake.LoadContract()
	if err != nil {
		return nil, err
	}
	f := &twilioFake{contract: contract}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f.url = "http://" + ln.Addr().String()
	f.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			return
		}
		m, vs := f.contract.CheckRequest(r, body)
		f.violate(vs)
		if m == nil || m.Operation != "CreateMessage" {
			f.answer(w, m, http.StatusNotFound, map[string]any{"code": 20404, "message": "The requested resource " + r.URL.Path + " was not found",
				"more_info": "https://www.twilio.com/docs/errors/20404", "status": http.StatusNotFound})
			return
		}
		form, _ := url.ParseQuery(string(body))
		if f.recording.Load() {
			at := time.Now()
			f.sendsMu.Lock()
			f.sends = append(f.sends, loadkit.Send{From: form.Get("From"), To: form.Get("To"), At: at})
			f.sendsMu.Unlock()
		}
		sid := fmt.Sprintf("SM%032d", f.seq.Add(1))
		n := f.count.Add(1)
		f.notify(n)
		f.answer(w, m, http.StatusCreated, map[string]any{
			"sid": sid, "account_sid": accountSID, "to": form.Get("To"), "from": form.Get("From"),
			"body": form.Get("Body"), "status": "queued", "num_segments": "1", "direction": "outbound-api",
			"date_created": time.Now().UTC().Format(time.RFC1123Z), "uri": "/2010-04-01/Accounts/" + accountSID + "/Messages/" + sid + ".json",
		})
	})}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// answer writes v as the JSON answer to a request for m, checked against the contract.
func (f *twilioFake) answer(w http.ResponseWriter, m *twiliofake.Match, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	if m != nil {
		f.violate(f.contract.CheckAnswer(m, status, w.Header(), b))
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (f *twilioFake) violate(vs []twiliofake.Violation) {
	if len(vs) == 0 {
		return
	}
	f.violationsMu.Lock()
	defer f.violationsMu.Unlock()
	f.broken = append(f.broken, vs...)
}

// violations returns what broke Twilio's contract so far.
func (f *twilioFake) violations() []twiliofake.Violation {
	f.violationsMu.Lock()
	defer f.violationsMu.Unlock()
	return slices.Clone(f.broken)
}

func (f *twilioFake) notify(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.waiting[:0]
	for _, w := range f.waiting {
		if n >= w.n {
			w.ch <- time.Now()
		} else {
			kept = append(kept, w)
		}
	}
	f.waiting = kept
}

// when returns a channel that receives the moment the count reaches n.
func (f *twilioFake) when(n int64) <-chan time.Time {
	ch := make(chan time.Time, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count.Load() >= n {
		ch <- time.Now()
		return ch
	}
	f.waiting = append(f.waiting, countWaiter{n: n, ch: ch})
	return ch
}

// record starts keeping the accepted texts (forgetting those kept before) or stops.
func (f *twilioFake) record(on bool) {
	f.sendsMu.Lock()
	if on {
		f.sends = nil
	}
	f.sendsMu.Unlock()
	f.recording.Store(on)
}

// recorded returns a copy of the texts kept since record(true).
func (f *twilioFake) recorded() []loadkit.Send {
	f.sendsMu.Lock()
	defer f.sendsMu.Unlock()
	return slices.Clone(f.sends)
}

func (f *twilioFake) close() { _ = f.srv.Close() }
