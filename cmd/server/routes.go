package main

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/logging"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// routes lists every route the server answers.
func (a *app) routes() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = httperr.Handler(a.log)

	// X-Forwarded-For is believed only when the peer is a proxy on a private network or
	// loopback (echo's default trust ranges); otherwise c.RealIP() is the TCP peer, so a
	// client cannot pick the address the dashboard's sign-in limit counts against.
	e.IPExtractor = echo.ExtractIPFromXFFHeader()

	e.Use(requestID)
	e.Use(a.requestLogger)
	// Inside the logger, so a recovered panic is logged as the 500 it becomes.
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, DisablePrintStack: true}))
	e.Use(httpMetrics(a.registry))
	// Middleware added with Use runs after routing: c.Path() is the matched route.
	e.Use(bodyLimits())
	e.Use(middleware.ContextTimeout(20 * time.Second))

	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	e.GET("/readyz", a.readyz)
	e.GET("/metrics", a.publicMetrics(metricsHandler(a.registry)))

	(&shopapi.Handlers{Shops: a.shops, Openings: a.slots, AdminToken: a.cfg.AdminToken}).Register(e)
	a.dashboard.Register(e)

	tw := &webhooks.Twilio{Inbound: a.inbound, Validator: a.validator, PublicURL: a.cfg.PublicURL, Logger: a.log, Metrics: a.metrics}
	e.POST(webhooks.TwilioPath, tw.Handle)
	ts := &webhooks.TwilioStatus{Recorder: a.offers, Validator: a.validator, PublicURL: a.cfg.PublicURL, Logger: a.log, Metrics: a.metrics}
	e.POST(webhooks.TwilioStatusPath, ts.Handle)
	st := &webhooks.Stripe{Payments: a.slotPayments, Secrets: a.cfg.StripeWebhookSecrets, Logger: a.log, Metrics: a.metrics}
	e.POST(webhooks.StripePath, st.Handle) // the handler caps the body at 1 MiB itself

	e.GET("/pay/done", payPage("Thank you! Your payment is being confirmed; we'll text you."))
	e.GET("/pay/cancelled", payPage("Payment not completed. Your slot is held until the link expires."))
	return e
}

// requestLogger puts the request id into the request's context (every log line of the
// request carries it) and logs one line per request, without query strings (which may
// carry a phone number).
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
		a.log.LogAttrs(ctx, levelFor(c.Response().Status), "request",
			slogStr("method", req.Method), slogStr("path", c.Path()), slogInt("status", c.Response().Status),
			slogDur("duration", time.Since(start)))
		return nil
	}
}

func (a *app) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "redis": "ok"}
	status := http.StatusOK
	if err := a.pool.Ping(ctx); err != nil {
		checks["postgres"], status = "unreachable", http.StatusServiceUnavailable
	}
	if err := a.redis.Ping(ctx).Err(); err != nil {
		checks["redis"], status = "unreachable", http.StatusServiceUnavailable
	}
	return c.JSON(status, checks)
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
		case webhooks.StripePath:
			return webhooks.MaxStripeBody + defaultBodyLimit
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
		bodyLimitFor(http.MethodPost, dashboard.ImportPath), bodyLimitFor(http.MethodPost, webhooks.StripePath)} {
		limits[l] = middleware.BodyLimit(strconv.FormatInt(l, 10))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		handlers := make(map[int64]echo.HandlerFunc, len(limits))
		for l, mw := range limits {
			handlers[l] = mw(next)
		}
		return func(c echo.Context) error {
			return handlers[bodyLimitFor(c.Request().Method, c.Path())](c)
		}
	}
}

func payPage(msg string) echo.HandlerFunc {
	page := `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
		`<title>Payment</title><body style="font-family:system-ui;max-width:30em;margin:3em auto;padding:0 1em">` +
		`<h1>Slot recovery</h1><p>` + msg + `</p></body></html>`
	return func(c echo.Context) error { return c.HTML(http.StatusOK, page) }
}
