package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/delivery"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/join"
	joinpage "github.com/slotrecovery/slotrecovery/internal/join/page"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/logging"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/migrate"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/paylink"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/stats"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

const usage = `usage: server [serve | migrate | simulate sms|stripe|calcom ... | erasure-key retire | secrets-key reencrypt]

  serve      apply migrations, then serve HTTP and run the offer workers (default)
  migrate    apply migrations and exit
  simulate   sign and send a test webhook to a running server (see: server simulate -h)
  erasure-key retire
             give up the kept hashes made under keys ERASURE_KEY no longer lists
  secrets-key reencrypt
             move every secret sealed or derived under SECRETS_KEY to its newest key

Configuration comes from the environment; see README.md.`

// run is the whole program, callable from tests: args without the program name,
// getenv for configuration, and where to write.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, getenv, stderr, serveOptions{})
	case "migrate":
		cfg, err := config.Load(getenv)
		if err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
		log := logging.New(stderr, cfg.LogLevel)
		pool, err := openPostgres(ctx, cfg)
		if err != nil {
			return err
		}
		defer pool.Close()
		if err := migrate.Up(ctx, pool, log); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
		return nil
	case "simulate":
		return simulate(ctx, args, getenv, stdout)
	case "erasure-key":
		return erasureKey(ctx, args, getenv, stdout, stderr)
	case "secrets-key":
		return secretsKey(ctx, args, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
}

// erasureKey runs `server erasure-key retire`: the hashes of opted-out and erased
// numbers made under keys ERASURE_KEY no longer lists are given up, so that the server
// starts with the setting (it refuses to otherwise).
func erasureKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) != 1 || args[0] != "retire" {
		return fmt.Errorf("usage: server erasure-key retire")
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	pool, err := openPostgres(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrate.Up(ctx, pool, logging.New(stderr, cfg.LogLevel)); err != nil {
		return err
	}
	cust, err := customers.New(pool, customers.Config{PhoneKeys: cfg.ErasureKeys})
	if err != nil {
		return err
	}
	n, err := cust.RetireErasureKeys(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "erasure keys given up: %d (numbers recorded under them are no longer recognised)\n", n)
	return nil
}

// app is the wired server.
type app struct {
	cfg         config.Config
	log         *slog.Logger
	pool        *pgxpool.Pool
	redis       redis.UniversalClient
	lockWatcher *redislock.Watcher
	river       *river.Client[pgx.Tx]
	// queue queues jobs through river once it is made (the services' inserter).
	queue         *riverRef
	healer        *offers.Healer
	registry      *prometheus.Registry
	metrics       *metrics.Metrics
	shops         *shops.Service
	customers     *customers.Service
	erasure       *erasure.Service
	senders       *senders.Service
	slots         *slots.Service
	book          *book.Service
	catalog       *catalog.Catalog
	ledger        *ledger.Service
	offers        *offers.Service
	stats         *stats.Service
	delivery      *delivery.Service
	inbound       *inbound.Service
	inbox         *inbox.Service
	hooks         *hooks.Service
	idempotency   *idempotency.Store
	calendar      *calendar.Service
	payments      *stripe.Client
	validator     *twilio.Validator
	dashboard     *dashboard.Dashboard
	join          *join.Service
	joinPage      *joinpage.Page
	paylinks      *paylink.Links
	sessionSecret []byte
	// jobTimeouts is each registered job kind's longest run (see addWorker).
	jobTimeouts map[string]time.Duration
}

// serveOptions are what tests change beyond the environment.
type serveOptions struct {
	// ready, if not nil, receives the listening address.
	ready chan<- string
	// tune adjusts the services' configuration (shorter delays in tests).
	tune func(*slots.Config, *ledger.Config, *offers.Config)
	// listening, if not nil, is told the address of each private listener ("metrics",
	// "pprof") once it listens.
	listening func(name, addr string)
	// tuneHooks adjusts the outbound webhooks' configuration (a faster schedule).
	tuneHooks func(*hooks.Config)
	// tuneSenders adjusts the senders' configuration (faster polls of the registration).
	tuneSenders func(*senders.Config)
	// rescueAfter, when not 0, replaces rescueStuckJobsAfter (a test of a killed
	// instance cannot wait minutes for River's rescuer).
	rescueAfter time.Duration
}

// serve runs until ctx ends.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer, opts serveOptions) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := logging.New(stderr, cfg.LogLevel)
	a, err := build(ctx, cfg, log, opts)
	if err != nil {
		return err
	}
	defer a.close()

	if err := a.river.Start(ctx); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	// The River client is recorded alive, and the offer waves of instances that died
	// mid-run are resumed within a minute (offers.Healer). Once River has stopped, the
	// client is recorded stopped, so a wave it left running is resumed at once.
	healCtx, stopHealing := context.WithCancel(context.WithoutCancel(ctx))
	healed := make(chan struct{})
	go func() {
		defer close(healed)
		_ = a.healer.Run(healCtx)
	}()
	defer func() { stopHealing(); <-healed }()
	stopHealer := func(ctx context.Context) {
		stopHealing()
		<-healed
		if err := a.healer.Stopped(ctx); err != nil {
			log.Warn("river client not recorded as stopped; its waves resume once its heartbeat is stale", "err", err)
		}
	}
	// Every instance turns recorded webhook events into deliveries (they share the work:
	// SKIP LOCKED). It stops before the pool closes; an event it had not dispatched is
	// left for another instance, or this one's next start.
	dispatchCtx, stopDispatching := context.WithCancel(context.WithoutCancel(ctx))
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		a.hooks.RunDispatcher(dispatchCtx)
	}()
	defer func() { stopDispatching(); <-dispatched }()
	srv := &http.Server{
		Handler:           a.routes(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	log.Info("serving", "addr", ln.Addr().String(), "public_url", cfg.PublicURL, "dev_mode", cfg.DevMode,
		"twilio", cfg.TwilioConfigured(), "stripe", cfg.StripeConfigured(), "stripe_connect", cfg.StripeConnect)
	if opts.ready != nil {
		opts.ready <- ln.Addr().String()
	}
	errc := make(chan error, 3)
	go func() { errc <- srv.Serve(ln) }()
	private, err := a.servePrivate(ctx, errc, opts.listening)
	if err != nil {
		_ = srv.Close()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = a.river.Stop(sctx)
		stopHealer(sctx)
		return err
	}

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 25*time.Second)
	defer cancel()
	// In-flight requests finish first, then the workers finish their current jobs.
	err = srv.Shutdown(shutCtx)
	for _, p := range private {
		_ = p.Close() // scrapes and profiles need no grace
	}
	if serr := a.river.Stop(shutCtx); serr != nil {
		// Jobs still running past the deadline are cancelled; River retries them on
		// another instance (every job here is safe to run again).
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if cerr := a.river.StopAndCancel(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("stop workers: %w", cerr))
		}
		ccancel()
	}
	stopHealer(shutCtx)
	log.Info("stopped")
	return err
}

// servePrivate starts the optional private listeners: METRICS_ADDR (GET /metrics) and
// PPROF_ADDR (net/http/pprof). They are never the public port, and pprof is off unless
// PPROF_ADDR is set. A listener that stops unexpectedly sends its error to errc.
func (a *app) servePrivate(ctx context.Context, errc chan<- error, listening func(name, addr string)) ([]*http.Server, error) {
	var servers []*http.Server
	for _, l := range []struct {
		name, addr string
		handler    http.Handler
		// writeTimeout is 0 for pprof, whose CPU profile and trace stream for as long as
		// asked (30 s by default).
		writeTimeout time.Duration
	}{
		{"metrics", a.cfg.MetricsAddr, privateMetrics(a.registry), 30 * time.Second},
		{"pprof", a.cfg.PprofAddr, pprofHandler(), 0},
	} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			for _, s := range servers {
				_ = s.Close()
			}
			return nil, fmt.Errorf("listen for %s on %s: %w", l.name, l.addr, err)
		}
		if host, _, _ := net.SplitHostPort(l.addr); l.name == "pprof" && !isLoopbackHost(host) {
			a.log.Warn("pprof listens beyond loopback: keep PPROF_ADDR off public networks", "addr", ln.Addr().String())
		}
		srv := &http.Server{
			Handler: l.handler, ReadHeaderTimeout: readHeaderTimeout, WriteTimeout: l.writeTimeout,
			IdleTimeout: idleTimeout, ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
			BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		}
		servers = append(servers, srv)
		a.log.Info("serving "+l.name, "addr", ln.Addr().String())
		if listening != nil {
			listening(l.name, ln.Addr().String())
		}
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s listener: %w", l.name, err)
			}
		}()
	}
	return servers, nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func openPostgres(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, errors.New("DATABASE_URL is malformed")
	}
	if !strings.Contains(cfg.DatabaseURL, "pool_max_conns") {
		pcfg.MaxConns = defaultPoolConns(runtime.GOMAXPROCS(0))
	}
	// pgx prepares each statement once per connection, and Postgres plans a prepared
	// statement afresh for its first five executions before it considers a cached
	// generic plan. With many connections each runs few of a given statement, so nearly
	// every execution was planned: half of Postgres's statement time on the YES path
	// (BookingClaim: ~2 ms to plan, under 1 ms to run). Our statements look rows up by
	// keys, where the generic plan is the custom one, so it is used from the first
	// execution. DATABASE_URL can still say plan_cache_mode.
	if _, set := pcfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set {
		pcfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	// google/uuid values implement driver.Valuer and sql.Scanner, so pgx would send and
	// read every id through its string form: a tenth of the server's CPU on the YES path.
	// Registered, they travel as the 16 bytes they are (uuid.go).
	pcfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerUUID(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres (DATABASE_URL): %w", err)
	}
	return pool, nil
}

// defaultPoolConns is the pool's size when DATABASE_URL does not say pool_max_conns:
// four connections a core, and at least 8, since workers and webhooks share the pool
// (pgx's own default, 4 on 2 cores, is too small for both). More connections than
// Postgres can run at once only queue inside Postgres, where each waits for a core
// behind the others: with 3 instances on one 2-core machine, 8 an instance answered
// the YES path's throughput scenario with a third of the p99 that 20 did
// (docs/performance.md).
func defaultPoolConns(procs int) int32 {
	return int32(max(8, 4*procs))
}

// idleTimeout is how long the server keeps a client's idle keep-alive connection. A
// client (a load balancer, Twilio, a test's client) must drop its idle connections
// sooner: one that reuses a connection just as the server closes it gets EOF for a
// POST it cannot safely retry. Load balancers' defaults are below it (60 s for AWS's
// ALB).
const idleTimeout = 90 * time.Second

// readHeaderTimeout is how long the server waits for a request's headers. On a new
// connection it runs from the accept, so a connection opened and left without a request
// (an HTTP client's pool dials one for a burst, then serves the burst on others) is
// closed after it, silently; a client that then sends its first request on it gets EOF
// for a request the server never saw. Clients that keep such connections must drop them
// sooner (docs/operations.md), as keep-alive ones before idleTimeout.
const readHeaderTimeout = 5 * time.Second

// rescueStuckJobsAfter is River's RescueStuckJobsAfter; see build.
// The soak showed what a long horizon costs: a wave killed mid-run leaves its customers
// untexted until the rescue (15 minutes at first); 7 keeps that short.
const rescueStuckJobsAfter = 7 * time.Minute

// addWorker registers w and records how long River lets one of its jobs run (its
// Timeout, else River's default), which must stay below rescueStuckJobsAfter.
func addWorker[T river.JobArgs](ws *river.Workers, timeouts map[string]time.Duration, w river.Worker[T]) {
	river.AddWorker(ws, w)
	var args T
	d := w.Timeout(&river.Job[T]{JobRow: &rivertype.JobRow{Kind: args.Kind()}, Args: args})
	if d == 0 {
		d = river.JobTimeoutDefault
	}
	timeouts[args.Kind()] = d // -1 (no timeout) is kept: the test refuses it
}

func (a *app) close() {
	if a.hooks != nil {
		a.hooks.Close() // the webhook slots' connection: the workers have stopped
	}
	if a.lockWatcher != nil {
		_ = a.lockWatcher.Close()
	}
	if a.redis != nil {
		_ = a.redis.Close()
	}
	if a.pool != nil {
		a.pool.Close()
	}
}

// riverRef lets the services hold the River client before it is built.
type riverRef struct{ c *river.Client[pgx.Tx] }

func (r *riverRef) InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	return r.c.InsertManyTx(ctx, tx, params)
}

func (r *riverRef) JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error) {
	return r.c.JobList(ctx, params)
}

func (r *riverRef) JobDeleteManyTx(ctx context.Context, tx pgx.Tx, params *river.JobDeleteManyParams) (*river.JobDeleteManyResult, error) {
	return r.c.JobDeleteManyTx(ctx, tx, params)
}

func (r *riverRef) JobListTx(ctx context.Context, tx pgx.Tx, params *river.JobListParams) (*river.JobListResult, error) {
	return r.c.JobListTx(ctx, tx, params)
}

func (r *riverRef) InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return r.c.InsertTx(ctx, tx, args, opts)
}

// inboundURL is the URL Twilio is given for a shop's inbound texts: PUBLIC_URL and the
// webhook's path, with the connection overrides (TWILIO_CONNECTION_OVERRIDES) as its
// fragment, so that Twilio retries a text whose request failed.
func inboundURL(cfg config.Config) string {
	u := cfg.PublicURL + webhooks.TwilioPath
	if cfg.TwilioOverrides != "" {
		u += "#" + cfg.TwilioOverrides
	}
	return u
}
