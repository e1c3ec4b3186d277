package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/config"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
	"github.com/slotrecovery/slotrecovery/internal/connectors/ics"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/delivery"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/join"
	joinpage "github.com/slotrecovery/slotrecovery/internal/join/page"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/logging"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/migrate"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/outbox"
	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/paylink"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/redislock"
	"github.com/slotrecovery/slotrecovery/internal/retention"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/stats"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// build wires every part of the server from the configuration, in four steps: the
// stores (Postgres, its migrations, Redis, the metrics' registry), the vendors (Twilio,
// Stripe), the services, and the job runner. What a failed step leaves open is closed.
func build(ctx context.Context, cfg config.Config, log *slog.Logger, opts serveOptions) (_ *app, err error) {
	a := &app{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if err := a.openStores(ctx); err != nil {
		return nil, err
	}
	v, err := a.openVendors()
	if err != nil {
		return nil, err
	}
	// The services enqueue through the River client, which needs their workers before it
	// exists: they get a reference that is filled in by newRiver, before anything runs.
	queue := &riverRef{}
	if err := a.wireServices(ctx, v, queue, opts); err != nil {
		return nil, err
	}
	if err := a.newRiver(v, queue, opts); err != nil {
		return nil, err
	}
	return a, nil
}

// openStores opens Postgres (and brings its schema up to date), Redis and the metrics'
// registry.
func (a *app) openStores(ctx context.Context) (err error) {
	if a.pool, err = openPostgres(ctx, a.cfg); err != nil {
		return err
	}
	if err := migrate.Up(ctx, a.pool, a.log); err != nil {
		return err
	}
	ropts, _ := config.RedisOptions(a.cfg.RedisURL) // validated by config.Load
	ropts.DialTimeout, ropts.ReadTimeout, ropts.WriteTimeout = 2*time.Second, time.Second, time.Second
	// Our commands and replies are a few hundred bytes (keys, a script's SHA, a counter),
	// while go-redis buffers 32 KiB each way a connection (128 KiB for its pipeline
	// pool's): 2.3 MB of an instance's live heap after a flash. A buffer only sets how
	// much one read or write moves; larger payloads still pass.
	ropts.ReadBufferSize, ropts.WriteBufferSize = redisBuffer, redisBuffer
	ropts.PipelineReadBufferSize, ropts.PipelineWriteBufferSize = redisBuffer, redisBuffer
	a.redis = redis.NewUniversalClient(ropts)
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	if err := a.redis.Ping(pctx).Err(); err != nil {
		// Not fatal: bookings fail closed and /readyz reports it until Redis is back.
		a.log.Warn("redis unreachable at start", "err", err)
	}
	cancel()
	a.registry = prometheus.NewRegistry()
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.metrics = metrics.New(a.registry)
	return nil
}

// redisBuffer is each Redis connection's read and write buffer (net/http's own size).
const redisBuffer = 4 << 10

// vendors are the server's clients of Twilio and Stripe, as the services take them.
type vendors struct {
	// texter sends texts: through Twilio (a shop's own Messaging Service when it has
	// one), or to the log without Twilio credentials.
	texter offers.Texter
	// numbers and registrar are shops' own senders (numbers, Messaging Services, the A2P
	// registration) through the same Twilio client; nil without credentials (those
	// routes answer 503).
	numbers   senders.Provider
	registrar senders.Registrar
	// payments goes to the ledger alone; nil: no shop takes payments.
	payments ledger.PaymentProvider
}

// openVendors makes the Twilio and Stripe clients the configuration names (and the
// validator of Twilio's signatures).
func (a *app) openVendors() (vendors, error) {
	cfg := a.cfg
	var v vendors
	if cfg.TwilioConfigured() {
		// Every text asks Twilio for its delivery reports (sent, delivered, undelivered).
		t, err := twilio.New(twilio.Config{AccountSID: cfg.TwilioAccountSID, AuthToken: cfg.TwilioAuthToken, APIURL: cfg.TwilioAPIURL,
			StatusCallbackURL: cfg.PublicURL + webhooks.TwilioStatusPath, PrimaryProfileSID: cfg.TwilioISVProfileSID})
		if err != nil {
			return vendors{}, fmt.Errorf("twilio: %w", err)
		}
		v.texter = senders.NewTexter(t, a.pool)
		v.numbers, v.registrar = t, t
		a.validator = twilio.NewValidatorWithOverrides(cfg.TwilioAuthToken, cfg.TwilioOverrides)
	} else {
		a.log.Warn("DEV_MODE: no Twilio credentials; texts are logged, inbound texts are not verified")
		v.texter = sms.NewLogSender(a.log)
	}
	if cfg.StripeConfigured() {
		var err error
		if a.payments, err = stripe.New(stripe.Config{SecretKey: cfg.StripeSecretKey, APIURL: cfg.StripeAPIURL}); err != nil {
			return vendors{}, fmt.Errorf("stripe: %w", err)
		}
		v.payments = a.payments
	}
	return v, nil
}

// serviceConfigs are the services' configurations, from the server's and as the test's
// options tune them.
type serviceConfigs struct {
	slots   slots.Config
	ledger  ledger.Config
	offers  offers.Config
	hooks   hooks.Config
	senders senders.Config
}

func (a *app) serviceConfigs(secrets *keyring.Ring, opts serveOptions) serviceConfigs {
	cfg, log := a.cfg, a.log
	c := serviceConfigs{
		slots: slots.Config{KeyPrefix: cfg.RedisKeyPrefix, Logger: log, MinimumCharge: stripe.MinimumCharge},
		ledger: ledger.Config{Logger: log, Metrics: a.metrics,
			CheckoutSuccessURL: cfg.PublicURL + "/pay/done", CheckoutCancelURL: cfg.PublicURL + "/pay/cancelled",
			// Connect: shops' own accounts, the platform's fee, and where Stripe's
			// onboarding sends the owner back (the dashboard's settings).
			Connect: cfg.StripeConnect, PlatformFeeBPS: cfg.PlatformFeeBPS, ConnectAccountType: cfg.StripeConnectAccountType,
			OnboardingReturnURL: cfg.PublicURL + "/dashboard/stripe/return", OnboardingRefreshURL: cfg.PublicURL + "/dashboard/stripe/onboarding"},
		// First waves offer an opening first to customers booked later who asked to move
		// up (internal/book's MoveUp takes their YES: inbound.Config.Mover).
		offers: offers.Config{Logger: log, Metrics: a.metrics, Pacer: pacing.New(a.redis, cfg.RedisKeyPrefix), MoveUps: true},
		// Outbound webhooks: http:// URLs only in development, private addresses only
		// when WEBHOOK_ALLOW_PRIVATE=1. The events' data is rendered when they are
		// recorded, in the API's types (internal/hooks).
		hooks: hooks.Config{DevMode: cfg.DevMode, AllowPrivate: cfg.WebhookAllowPrivate, Logger: log, Metrics: a.metrics,
			Secrets: secrets},
		senders: senders.Config{
			InboundURL: inboundURL(cfg), StatusCallbackURL: cfg.PublicURL + webhooks.TwilioStatusPath,
			RequireUSA2P: cfg.SMSUSA2P, PaymentsEnabled: cfg.StripeConfigured(), Logger: log,
			// The campaign describes the shop's own join page and keywords (a.join is made
			// before any registration runs).
			Join: func(shop shops.Shop) senders.JoinFlow {
				return senders.JoinFlow{PageURL: cfg.PublicURL + "/join/" + shop.Slug, Confirmation: a.join.Confirmation(shop),
					Keywords: join.ShopKeywords(shop)}
			}},
	}
	if opts.tune != nil {
		opts.tune(&c.slots, &c.ledger, &c.offers)
	}
	if opts.tuneHooks != nil {
		opts.tuneHooks(&c.hooks)
	}
	if opts.tuneSenders != nil {
		opts.tuneSenders(&c.senders)
	}
	return c
}

// wireServices makes the services over the stores and vendors (the shops', their
// customers' and senders' here, then wireSlots), and refuses to go on when a key setting
// would leave stored secrets or kept hashes unreadable.
func (a *app) wireServices(ctx context.Context, v vendors, queue *riverRef, opts serveOptions) error {
	cfg, log := a.cfg, a.log
	a.queue = queue
	cool, err := cooldown.New(a.redis, cooldown.Config{Prefix: cfg.RedisKeyPrefix})
	if err != nil {
		return err
	}
	a.sessionSecret = sessionSecret(cfg, log)
	secrets, err := secretsRing(cfg)
	if err != nil {
		return err
	}
	c := a.serviceConfigs(secrets, opts)
	// A booked text's payment link is short and ours (PUBLIC_URL/p/{code}, a redirect to
	// Checkout while the hold lasts), derived under SECRETS_KEY: nothing more stored.
	if a.paylinks, err = paylink.New(a.pool, secrets, cfg.PublicURL); err != nil {
		return err
	}
	c.ledger.Links = a.paylinks
	a.shops = shops.New(a.pool, shops.Config{PaymentsEnabled: cfg.StripeConfigured(), StripeConnect: cfg.StripeConnect,
		PlatformFeeBPS: cfg.PlatformFeeBPS, ChargesIn: stripe.ChargesIn, MinimumCharge: stripe.MinimumCharge,
		Secrets: secrets})
	if a.customers, err = customers.New(a.pool, customers.Config{PhoneKeys: cfg.ErasureKeys, Consent: join.OwnerConsent{}}); err != nil {
		return err
	}
	a.erasure = erasure.New(a.pool, a.customers, queue, erasure.Config{})
	// A setting that leaves out a key the kept hashes were made under would silently
	// forget every STOP recorded under it: refused (docs/operations.md, Erasure key).
	if err := a.customers.CheckErasureKeys(ctx); err != nil {
		if errors.Is(err, customers.ErrErasureKeyMissing) {
			err = fmt.Errorf("%w; %s", err, fallbackHint("ERASURE_KEY"))
		}
		return err
	}
	a.hooks = hooks.New(a.pool, queue, c.hooks)
	// A setting that leaves out a key in use would leave secrets that cannot sign and
	// feed addresses that cannot be shown: refused (docs/operations.md, Secrets key).
	if err := checkSecrets(ctx, a.shops, a.hooks, log); err != nil {
		return err
	}
	a.idempotency = idempotency.New(a.pool, idempotency.Config{})
	a.senders = senders.New(a.pool, queue, v.numbers, v.registrar, pacing.New(a.redis, cfg.RedisKeyPrefix), c.senders)
	a.calendar = calendar.New(a.pool, a.shops, calendar.Config{PublicURL: cfg.PublicURL})
	return a.wireSlots(ctx, v, queue, cool, secrets, c)
}

// wireSlots makes the services of openings, offers, replies and bookings, and the
// dashboard over them.
func (a *app) wireSlots(ctx context.Context, v vendors, queue *riverRef, cool *cooldown.Store, secrets *keyring.Ring, c serviceConfigs) (err error) {
	cfg, log := a.cfg, a.log
	// The payment provider goes to the ledger alone; inbound asks it for the payment link
	// of a booking a YES made (ledger.Checkout).
	a.ledger = ledger.New(a.pool, queue, v.payments, c.ledger)
	// One subscription per instance announces slot lock releases to the claims waiting
	// on them (see slots.Book).
	lockChannel := cfg.RedisKeyPrefix + slots.LockChannel
	a.lockWatcher = redislock.NewWatcher(a.redis, lockChannel)
	a.catalog = catalog.New(a.pool, nil)
	a.slots = slots.New(a.pool, queue, slots.RedisLocker(redislock.New(a.redis), a.lockWatcher, lockChannel, a.metrics), cool, c.slots)
	a.book = book.New(a.pool, a.shops, a.slots, book.Config{Logger: log, Secrets: secrets, AllowHTTPFeeds: cfg.DevMode,
		// A move-up of a cal.com or Square appointment is written back through the
		// vendor's API when its connector holds an API key.
		Queue: queue,
		Movers: map[connectors.Source]book.Mover{
			connectors.SourceCalcom: calcom.NewClient(cfg.CalcomAPIURL, nil),
			connectors.SourceSquare: square.NewClient(cfg.SquareAPIURL, nil),
		}})
	// A SECRETS_KEY that leaves out a key a connector's secret is sealed under would
	// refuse every delivery to that connector: refused at start, as for webhook secrets.
	if err := a.book.CheckConnectorKeys(ctx); err != nil {
		return err
	}
	a.offers = offers.New(a.pool, queue, v.texter, cool, a.shops, a.customers, a.slots, c.offers)
	a.delivery = delivery.New(a.pool, a.offers, a.shops, a.customers, nil)
	if err := a.wireJoin(queue); err != nil {
		return err
	}
	// Replies: a YES to a move-up moves the booking (the book), and the join keyword and
	// a join's YES go to the join service.
	a.inbound = inbound.New(a.pool, queue, a.shops, a.customers, a.slots, a.ledger, inbound.Config{Logger: log, Metrics: a.metrics,
		Mover: a.book, Joins: a.join})
	// The owner's inbox: replies go out as texts through the River client, to numbers
	// customers says may be texted, within the shop's rules (quiet hours, registration,
	// limits shared by every instance).
	a.inbox = inbox.New(a.pool, queue, a.customers, inbox.Config{Logger: log, Rules: senders.OwnerReplies{
		Senders: a.senders, Shops: a.shops, Limits: ratelimit.New(a.redis, ratelimit.Config{Prefix: cfg.RedisKeyPrefix}),
	}})
	a.stats = stats.New(a.pool, stats.Config{})
	// The dashboard asks the instance's one River client when the next waves are due.
	if a.dashboard, err = dashboard.New(a.pool, a.shops, a.slots, dashboard.Config{
		SessionSecret: a.sessionSecret, Secure: !cfg.DevMode, Logger: log,
		Redis: a.redis, KeyPrefix: cfg.RedisKeyPrefix, Waves: offers.NewWaveSchedule(queue), AccountIssue: twilio.AccountIssueOf,
		Hooks: a.hooks, PublicURL: cfg.PublicURL, Inbox: a.inbox, Senders: a.senders,
		Customers: a.customers, Erasure: a.erasure, Book: a.book, JoinPages: true, Queue: queue, Join: a.join,
		Offers: a.offers, Ledger: a.ledger, Stats: a.stats,
	}); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// wireJoin makes the join pages and the service behind them: the pumping limits count
// in Redis, shared by every instance, and each refusal is counted by reason on /metrics.
func (a *app) wireJoin(queue *riverRef) (err error) {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "slotrecovery_join_refused_total",
		Help: "Join page submissions that sent no confirmation text, by reason (honeypot, country, own_number, ip, number, shop_budget, unavailable).",
	}, []string{"reason"})
	a.registry.MustRegister(refused)
	a.join = join.New(a.pool, queue, a.customers, join.Config{
		Limits:  join.Limits{Limiter: ratelimit.New(a.redis, ratelimit.Config{Prefix: a.cfg.RedisKeyPrefix})},
		Refused: func(reason string) { refused.WithLabelValues(reason).Inc() },
	})
	a.joinPage, err = joinpage.New(a.shops, a.join, joinpage.Config{Secret: a.sessionSecret, Secure: !a.cfg.DevMode, Logger: a.log,
		PublicURL: a.cfg.PublicURL})
	if err != nil {
		return fmt.Errorf("join page: %w", err)
	}
	return nil
}

// sessionSecret is SESSION_SECRET, or a random one for this instance's life.
func sessionSecret(cfg config.Config, log *slog.Logger) []byte {
	if cfg.SessionSecret != "" {
		return []byte(cfg.SessionSecret)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	if !cfg.DevMode {
		log.Warn("SESSION_SECRET is unset: dashboard sessions end on restart and do not cross instances")
	}
	return b
}

// newRiver makes the job runner with every worker and periodic job, and hands it to the
// services' reference.
func (a *app) newRiver(v vendors, queue *riverRef, opts serveOptions) error {
	workers, err := a.workers(v)
	if err != nil {
		return err
	}
	a.river, err = river.NewClient(riverpgxv5.New(a.pool), &river.Config{
		Queues:       jobs.Queues(),
		Workers:      workers,
		PeriodicJobs: a.periodicJobs(),
		// A job whose process died (killed, OOM, lost host) stays "running" until River's
		// rescuer retries it after this long; River's default is an hour, during which an
		// offer wave or a payment link is stuck. It must stay above every job's own
		// timeout, or a slow but live job would be run a second time beside itself: the
		// longest are the offer wave's and the purge's 5 minutes, and reconciliation's
		// 4m40s (TestRescueHorizonAboveJobTimeouts).
		RescueStuckJobsAfter: cmp.Or(opts.rescueAfter, rescueStuckJobsAfter),
		// River's default timeout of a job without its own must stay below the horizon
		// (it is: a minute), also under a test's shorter one.
		JobTimeout: min(river.JobTimeoutDefault, cmp.Or(opts.rescueAfter, rescueStuckJobsAfter)/2),
		// River's producers log their counts at info every few seconds per queue: at the
		// default level the server's log shows its own events, and River's warnings.
		Logger: logging.AtLeast(a.log, slog.LevelWarn).With("component", "river"),
	})
	if err != nil {
		return fmt.Errorf("river: %w", err)
	}
	queue.c = a.river
	if a.healer, err = offers.NewHealer(a.pool, a.river, offers.HealConfig{Logger: a.log}); err != nil {
		return fmt.Errorf("healer: %w", err)
	}
	return nil
}

// workers registers every job's worker, and records each one's timeout.
func (a *app) workers(v vendors) (*river.Workers, error) {
	log := a.log
	workers := river.NewWorkers()
	a.jobTimeouts = map[string]time.Duration{}
	addWorker(workers, a.jobTimeouts, &offers.WaveWorker{Service: a.offers})
	addWorker(workers, a.jobTimeouts, &outbox.TextWorker{Service: outbox.New(a.pool, v.texter, a.customers, a.ledger, outbox.Config{Logger: log, Metrics: a.metrics})})
	addWorker(workers, a.jobTimeouts, &ledger.SweepWorker{Service: a.ledger})
	addWorker(workers, a.jobTimeouts, &inbound.SweepWorker{Service: a.inbound})
	addWorker(workers, a.jobTimeouts, &slots.CompleteWorker{Service: a.slots})
	addWorker(workers, a.jobTimeouts, &ledger.RefundWorker{Service: a.ledger})
	addWorker(workers, a.jobTimeouts, &ledger.ReconcileWorker{Service: a.ledger})
	addWorker(workers, a.jobTimeouts, &erasure.ForgetTextJobsWorker{}) // an erasure's texts still running then
	addWorker(workers, a.jobTimeouts, &hooks.DeliveryWorker{Service: a.hooks})
	addWorker(workers, a.jobTimeouts, &senders.RegistrationWorker{Service: a.senders})
	addWorker(workers, a.jobTimeouts, &book.DeclarePendingWorker{Service: a.book})
	addWorker(workers, a.jobTimeouts, &book.WriteBackWorker{Service: a.book})
	// Calendar feeds are fetched through the webhooks' guarded client: a feed's address
	// is the owner's to choose (WEBHOOK_ALLOW_PRIVATE=1 lets it be private).
	addWorker(workers, a.jobTimeouts, &book.PollFeedsWorker{Service: a.book, Reader: ics.Reader{Client: a.hooks.GuardedClient()}})
	purger, err := retention.NewWorker(a.pool, retention.Config{Period: a.cfg.Retention, Logger: log, Metrics: a.metrics, Purges: purges(a.cfg)})
	if err != nil {
		return nil, err
	}
	addWorker(workers, a.jobTimeouts, purger)
	return workers, nil
}

// periodicJobs are the jobs the leader instance enqueues on a schedule.
func (a *app) periodicJobs() []*river.PeriodicJob {
	every := func(d time.Duration, args river.JobArgs, opts *river.PeriodicJobOpts) *river.PeriodicJob {
		return river.NewPeriodicJob(river.PeriodicInterval(d), func() (river.JobArgs, *river.InsertOpts) { return args, nil }, opts)
	}
	return []*river.PeriodicJob{
		// A lost Stripe webhook never leaves a slot held.
		every(time.Minute, jobs.Reconcile{}, nil),
		// Payment links the YES path could not make, and booked customers whose answer
		// may not have reached them.
		every(a.ledger.SweepEvery(), jobs.BookingSweep{}, &river.PeriodicJobOpts{RunOnStart: true}),
		// Texts whose handler died before answering are answered by text.
		every(time.Minute, jobs.InboundSweep{}, nil),
		// Freed appointment times whose declaration is still owed (the book's waiting
		// and failed claims).
		every(time.Minute, jobs.AppointmentsDeclare{}, nil),
		// The shops' calendar feeds (ics connectors), each polled every FeedEvery.
		every(book.FeedEvery, jobs.AppointmentsPollFeeds{}, nil),
		every(15*time.Minute, jobs.Complete{}, nil),
		// Webhook payloads and inbound texts are kept for RETENTION_DAYS only.
		every(time.Hour, jobs.Purge{}, nil),
	}
}
