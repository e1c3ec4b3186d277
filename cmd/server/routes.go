package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/logging"
	"github.com/slotrecovery/slotrecovery/internal/paylink"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// routes lists every route the server answers.
func (a *app) routes() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = httperr.Handler(a.log)

	e.IPExtractor = clientAddress(a.cfg.TrustedProxies)

	e.Use(requestID)
	e.Use(a.requestLogger)
	// Inside the logger, so a recovered panic is logged as the 500 it becomes.
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, DisablePrintStack: true}))
	e.Use(httpMetrics(a.registry))
	// Middleware added with Use runs after routing: c.Path() is the matched route.
	e.Use(bodyLimits())
	limits := ratelimit.New(a.redis, ratelimit.Config{Prefix: a.cfg.RedisKeyPrefix})
	e.Use(guessLimits(limits, a.log))
	e.Use(middleware.ContextTimeout(20 * time.Second))

	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	e.GET("/readyz", (&readiness{check: a.readyz, fresh: readyFresh}).handle)
	e.GET("/metrics", a.publicMetrics(metricsHandler(a.registry)))

	// The JSON API, the webhook endpoints, Idempotency-Key, and the public calendar feed
	// (shopapi.CalendarPath, whose token in the path is its credential).
	(&shopapi.Handlers{Shops: a.shops, Customers: a.customers, Erasure: a.erasure, Openings: a.slots, AdminToken: a.cfg.AdminToken,
		Ledger: a.ledger, StripeCalls: stripeCalls(limits), Hooks: a.hooks, Idempotency: a.idempotency, Calendar: a.calendar,
		PublicURL: a.cfg.PublicURL, Inbox: a.inbox, Senders: a.senders, Catalog: a.catalog,
		Book: a.book, Join: a.join, Queue: a.queue, Offers: a.offers, Stats: a.stats}).Register(e)
	a.dashboard.Register(e)
	if a.cfg.StripeConnect {
		a.dashboard.RegisterStripe(e, a.ledger, stripeCalls(limits)) // Stripe's onboarding, from the settings page
	}

	tw := &webhooks.Twilio{Inbound: a.inbound, Validator: a.validator, PublicURL: a.cfg.PublicURL, Overrides: a.cfg.TwilioOverrides,
		Logger: a.log, Metrics: a.metrics}
	e.POST(webhooks.TwilioPath, tw.Handle)
	ta := &webhooks.TwilioAnswered{Inbound: a.inbound, Validator: a.validator, PublicURL: a.cfg.PublicURL, Logger: a.log}
	e.POST(webhooks.TwilioAnsweredPath, ta.Handle)
	ts := &webhooks.TwilioStatus{Recorder: a.delivery, Validator: a.validator, PublicURL: a.cfg.PublicURL, Logger: a.log, Metrics: a.metrics}
	e.POST(webhooks.TwilioStatusPath, ts.Handle)
	st := &webhooks.Stripe{Ledger: a.ledger, Secrets: a.cfg.StripeWebhookSecrets, Logger: a.log, Metrics: a.metrics}
	e.POST(webhooks.StripePath, st.Handle) // the handler caps the body at 1 MiB itself
	if a.cfg.StripeConnect {
		// Connected accounts' events: their own endpoint and secret (see webhooks.StripeConnectPath).
		sc := &webhooks.Stripe{Ledger: a.ledger, Secrets: a.cfg.StripeConnectWebhookSecrets, Connect: true, Logger: a.log, Metrics: a.metrics}
		e.POST(webhooks.StripeConnectPath, sc.Handle)
	}

	// The booking systems' webhooks, one path per connector (/api/connectors); each
	// handler caps the body at connectors.MaxBody itself.
	conn := &webhooks.Connectors{Book: a.book, PublicURL: a.cfg.PublicURL, Logger: a.log}
	e.POST(webhooks.CalcomPath, conn.Calcom)
	e.POST(webhooks.SquarePath, conn.Square)

	// The shops' join pages (/join/<slug>): public, their form's body capped by the page.
	a.joinPage.Register(e)
	// A held booking's short payment link: its code is its credential (an AES block
	// under SECRETS_KEY: 2^128 to guess), so it needs no per-address limit.
	e.GET(paylink.Path, echo.WrapHandler(a.paylinks))

	e.GET("/pay/done", payPage("Thank you! Your payment is being confirmed; we'll text you."))
	e.GET("/pay/cancelled", payPage("Payment not completed. Your slot is held until the link expires."))
	return e
}

// clientAddress is how c.RealIP() finds the client every per-client limit counts
// against: the TCP peer, unless the peer is one of the trusted proxies (TRUSTED_PROXIES);
// then the nearest address in X-Forwarded-For that is not one. Echo's defaults would also
// trust any loopback, link-local or private peer: behind a layer-4 balancer, which adds
// no header, or inside a private network, every client would be such a peer and could
// pick its own address with the header. So nothing is trusted unless configured.
func clientAddress(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// requestLogger puts the request id into the request's context (every log line of the
// request carries it) and logs one line per request, without query strings (which may
// carry a phone number); an inbound text's line carries its outcome (X-Slot-Outcome),
// so a YES is one line at info, not two.
func (a *app) requestLogger(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := c.Response().Header().Get(echo.HeaderXRequestID)
		req := c.Request()
		ctx := logging.WithRequestID(req.Context(), id)
		c.SetRequest(req.WithContext(ctx))
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		level := levelFor(c.Path(), c.Response().Status)
		if !a.log.Enabled(ctx, level) {
			return nil
		}
		attrs := [5]slog.Attr{slogStr("method", req.Method), slogStr("path", c.Path()), slogInt("status", c.Response().Status),
			slogDur("duration", time.Since(start))}
		n := 4
		if o := c.Response().Header().Get(webhooks.OutcomeHeader); o != "" {
			// An inbound text's outcome: its one line at info (the handler's own is at debug).
			attrs[n], n = slogStr("outcome", o), n+1
		}
		a.log.LogAttrs(ctx, level, "request", attrs[:n]...)
		return nil
	}
}

// readyz pings Postgres and Redis.
func (a *app) readyz(ctx context.Context) (int, map[string]string) {
	checks := map[string]string{"postgres": "ok", "redis": "ok"}
	status := http.StatusOK
	if err := a.pool.Ping(ctx); err != nil {
		checks["postgres"], status = "unreachable", http.StatusServiceUnavailable
	}
	if err := a.redis.Ping(ctx).Err(); err != nil {
		checks["redis"], status = "unreachable", http.StatusServiceUnavailable
	}
	return status, checks
}

// readyFresh is how long a readiness check answers /readyz: a flood of probes costs
// Postgres and Redis one ping each a second per instance, not one each per probe. A
// load balancer probing every few seconds sees an answer at most this stale.
const readyFresh = time.Second

// readiness answers /readyz from the last check while it is fresh. Readiness is each
// instance's own (its pools, its connections), so the cache is per instance, in memory:
// counting probes in Redis would cost a round trip to Redis per probe, the very cost it
// is meant to save, and would depend on Redis to say Redis is down.
type readiness struct {
	check func(context.Context) (int, map[string]string)
	fresh time.Duration

	// mu is held during a check: probes that arrive meanwhile wait for its answer
	// instead of starting checks of their own.
	mu     sync.Mutex
	at     time.Time // when the last check ended; zero before the first
	status int
	body   map[string]string // never changed once answered: a new check makes a new map
}

func (r *readiness) handle(c echo.Context) error {
	r.mu.Lock()
	if r.at.IsZero() || time.Since(r.at) >= r.fresh {
		// The check is everyone's: one probe hanging up does not cancel it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), 2*time.Second)
		r.status, r.body = r.check(ctx)
		cancel()
		r.at = time.Now()
	}
	status, body := r.status, r.body
	r.mu.Unlock()
	return c.JSON(status, body)
}

// defaultBodyLimit is the body limit of every route but the few that take files or
// Stripe's events: the JSON API, the dashboard's forms (dashboard.MaxFormBytes), Twilio's
// webhooks (a text is at most 1,600 characters), and everything else.
const defaultBodyLimit = 64 << 10

// bodyLimitFor is the body limit of the route (echo's c.Path(), the route's template,
// such as /dashboard/customers/:id) a request matched. Never decide it by the request's
// path: echo routes on the raw path, so /dashboard/customers/%69mport has the path
// /dashboard/customers/import but is the route /dashboard/customers/:id, whose form
// would have been read under the import's limit. The routes with larger bodies cap them
// in their handlers too, a little lower, so that the handler's answer is the one sent.
func bodyLimitFor(method, route string) int64 {
	if method == http.MethodPost {
		switch route {
		case shopapi.ImportPath:
			return shopapi.MaxImportBytes + defaultBodyLimit
		case dashboard.ImportPath:
			return dashboard.MaxImportBytes + defaultBodyLimit
		case webhooks.StripePath, webhooks.StripeConnectPath:
			return webhooks.MaxStripeBody + defaultBodyLimit
		case webhooks.CalcomPath, webhooks.SquarePath:
			return connectors.MaxBody + defaultBodyLimit
		}
	}
	return defaultBodyLimit
}

// bodyLimits limits each request's body by its matched route (bodyLimitFor): a body
// whose Content-Length is over the limit is refused with 413 before a byte of it is
// read, and a longer one sent without a length fails the read that passes the limit
// (echo's BodyLimit, one per distinct limit).
func bodyLimits() echo.MiddlewareFunc {
	limits := map[int64]echo.MiddlewareFunc{}
	for _, l := range []int64{defaultBodyLimit, bodyLimitFor(http.MethodPost, shopapi.ImportPath),
		bodyLimitFor(http.MethodPost, dashboard.ImportPath), bodyLimitFor(http.MethodPost, webhooks.StripePath),
		bodyLimitFor(http.MethodPost, webhooks.StripeConnectPath), bodyLimitFor(http.MethodPost, webhooks.CalcomPath)} {
		limits[l] = middleware.BodyLimit(strconv.FormatInt(l, 10))
	}
	// Echo applies the middleware added with Use to the matched handler on every request
	// (its ServeHTTP calls each one with next): what is built here outside the inner
	// func is built once a request, so only the limit the route needs is wrapped.
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			return limits[bodyLimitFor(c.Request().Method, c.Path())](next)(c)
		}
	}
}

// The limits on guessing credentials, per client address (an IPv6 /64), counted in
// Redis so they hold across instances: N instances allow together what one allows.
var (
	// apiKeyGuesses limits the requests of the JSON API that end in 401 (a missing,
	// wrong or rotated shop API key). Keys are 256-bit random, so guessing one is
	// hopeless; the limit keeps floods of key lookups off Postgres. It fails open: while
	// Redis is unreachable the API goes on unlimited rather than refuse every owner.
	apiKeyGuesses = guessLimit{name: "api_key", limit: ratelimit.Limit{Burst: 20, Every: 3 * time.Second}}
	// adminGuesses limits wrong admin tokens on the admin's routes (POST /api/shops,
	// PATCH /api/shops/{id}). The token is the operator's choice (16 characters at least)
	// and may be guessable, so the count is exact, however many guesses arrive at once
	// (see guessLimit.reserve), and it fails closed: while Redis is unreachable no shop
	// is created or changed (503).
	adminGuesses = guessLimit{name: "admin_token", limit: ratelimit.Limit{Burst: 10, Every: time.Minute},
		reserve: true, failClosed: true}
)

// guessLimit is a limit on the requests of one client address that end in 401.
type guessLimit struct {
	// name keys the counts (ratelimit key "<name>:<client>") and names them in logs.
	name  string
	limit ratelimit.Limit
	// reserve takes one try before the request runs and gives it back unless the
	// request ends in 401, so no more than the limit's guesses are ever judged, however
	// many arrive at once; the price is that one client's concurrent requests, good
	// ones included, are capped at the burst. Without it a try is counted only once the
	// request ended in 401: requests never hold each other up, and a 401 past the limit
	// (a burst of concurrent guesses that all passed the check before any was counted)
	// is answered 429 instead, so no more than the limit's guesses are ever told
	// "wrong"; a right one among them is served.
	reserve bool
	// failClosed answers 503 while Redis cannot be asked; otherwise the request goes
	// on unlimited.
	failClosed bool
}

// limitGuesses enforces g on the requests it wraps: past the limit a client gets 429
// with Retry-After and the usual error body, before its credentials are looked at.
func limitGuesses(l *ratelimit.Limiter, log *slog.Logger, g guessLimit) echo.MiddlewareFunc {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lastWarned atomic.Int64 // unix seconds: an outage is logged every 10 s, not per request
	unavailable := func(c echo.Context, err error) {
		if now := time.Now().Unix(); lastWarned.Swap(now) < now-10 {
			log.WarnContext(c.Request().Context(), "guess limit unavailable", "limit", g.name, "fail_closed", g.failClosed, "err", err)
		}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx := c.Request().Context()
			key := g.name + ":" + ratelimit.ClientKey(c.RealIP())
			var res ratelimit.Result
			var err error
			if g.reserve {
				res, err = l.Allow(ctx, key, g.limit)
			} else {
				res, err = l.Check(ctx, key, g.limit)
			}
			if err != nil {
				unavailable(c, err)
				if g.failClosed {
					c.Response().Header().Set("Retry-After", "5")
					return &httperr.Error{Status: http.StatusServiceUnavailable, Code: "unavailable",
						Message: "credentials cannot be checked right now; retry shortly"}
				}
				return next(c)
			}
			if !res.Allowed {
				return tooManyGuesses(c, res.RetryAfter, g.reserve)
			}
			err = next(c)
			failed := answerStatus(c, err) == http.StatusUnauthorized
			// The count must be settled even when the client hung up.
			bg := context.WithoutCancel(ctx)
			switch {
			case g.reserve && !failed:
				if rerr := l.Return(bg, key, g.limit); rerr != nil {
					unavailable(c, rerr)
				}
			case !g.reserve && failed:
				res, cerr := l.Allow(bg, key, g.limit)
				if cerr != nil {
					unavailable(c, cerr)
				} else if !res.Allowed && !c.Response().Committed {
					return tooManyGuesses(c, res.RetryAfter, g.reserve)
				}
			}
			return err
		}
	}
}

// answerStatus is the status the request's answer has or will have: handlers here
// return their errors for the server's error handler to write.
func answerStatus(c echo.Context, err error) int {
	if c.Response().Committed || err == nil {
		return c.Response().Status
	}
	status, _, _ := httperr.Classify(err)
	return status
}

// tooManyGuesses is the answer past a guess limit: 429, Retry-After in whole seconds.
// A reserving limit also refuses a client's requests beyond the burst in flight at
// once, good ones included, so its message says so.
func tooManyGuesses(c echo.Context, wait time.Duration, reserve bool) error {
	secs := max(1, int64((wait+time.Second-1)/time.Second))
	c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	what := "too many failed attempts"
	if reserve {
		what = "too many failed attempts, or requests at once,"
	}
	return &httperr.Error{Status: http.StatusTooManyRequests, Code: "too_many_requests",
		Message: fmt.Sprintf("%s from your address; retry in %d seconds", what, secs)}
}

// guessLimits applies the guess limits by matched route: adminGuesses to the admin's
// routes, apiKeyGuesses to every other route of the JSON API that takes a shop key.
// Routes added to the API later are covered without a change here.
func guessLimits(l *ratelimit.Limiter, log *slog.Logger) echo.MiddlewareFunc {
	admin, api := limitGuesses(l, log, adminGuesses), limitGuesses(l, log, apiKeyGuesses)
	// Built once a request (see bodyLimits): a limit wraps next only on its routes.
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			route := c.Path()
			switch {
			case c.Request().Method == http.MethodPost && route == "/api/shops", route == "/api/shops/:id",
				route == shopapi.SenderNumberPath:
				// The routes the admin token opens (creating a shop, a shop's fee and
				// view, its own sender).
				return admin(next)(c)
			case strings.HasPrefix(route, "/api/") && route != "/api/openapi.json":
				return api(next)(c)
			}
			return next(c)
		}
	}
}

func payPage(msg string) echo.HandlerFunc {
	page := `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
		`<title>Payment</title><body style="font-family:system-ui;max-width:30em;margin:3em auto;padding:0 1em">` +
		`<h1>Slot recovery</h1><p>` + msg + `</p></body></html>`
	return func(c echo.Context) error { return c.HTML(http.StatusOK, page) }
}
