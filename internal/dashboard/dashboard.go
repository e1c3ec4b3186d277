// Package dashboard is the shop owners' web dashboard: server-rendered HTML that shows
// the slots the service recovered, the openings still being offered, and the money
// recovered, with forms to declare and cancel openings and a CSV export, the owner's
// inbox (the texts that wait for a person, and the reply form), and the appointment
// book (a day per person, with "Offer it") and its booking systems.
//
// It is an edge like the JSON API: it signs the owner in with the shop's API key,
// translates forms into calls on slots.Service, and reads its figures through the
// queries in db/queries/dashboard.sql. Sessions are stateless signed cookies (HMAC-SHA256
// under Config.SessionSecret), and sign-out records the session as ended in Postgres
// (shops.Service.EndSession) so that copies of its cookie stop working, whatever happens
// to Redis; a session also carries the version of the shop's API key it signed in under,
// so rotating the key (here or through the API) ends every session of the shop. Every
// form carries a CSRF token derived from the session, and every form is read only up to
// MaxFormBytes. Sign-in attempts are rate-limited per client address and per shop, in
// Redis, so the limits hold across instances.
// Pages work without JavaScript; a small script refreshes the live parts of the page.
package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/stats"
)

//go:embed static/*
var assets embed.FS

// Config configures the dashboard. Zero fields mean the defaults, except SessionSecret,
// which is required.
type Config struct {
	// Join shows what the join page refused on the settings page; nil shows nothing.
	Join *join.Service
	// Queue queues the texts the dashboard sends itself (a new alert number's code);
	// nil: a new alert number is refused.
	Queue jobs.Inserter
	// SessionSecret signs session cookies and CSRF tokens; at least 32 bytes. The caller
	// generates a random one when SESSION_SECRET is unset (sessions then end on restart).
	SessionSecret []byte
	// Secure marks cookies Secure; false only in DEV_MODE (plain http on localhost).
	Secure bool
	// SessionTTL is how long a sign-in lasts; 0 means 12 hours.
	SessionTTL time.Duration
	// RefreshEvery is how often the page's script refreshes the live figures; 0 means
	// 15 seconds.
	RefreshEvery time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives errors the owner only sees as "internal error"; nil discards them.
	Logger *slog.Logger
	// Redis counts the sign-in attempts (SignInsPerClient, SignInsPerShop) for every
	// instance at once. Required. Signing in fails closed without it: while Redis cannot
	// be asked, no attempt is let through (a 503 asks to retry); signed-in sessions do not
	// need it.
	Redis redis.UniversalClient
	// KeyPrefix is prepended to the dashboard's Redis keys (REDIS_KEY_PREFIX).
	KeyPrefix string
	// SignInsPerClient limits sign-in attempts from one client address (an IPv6 /64),
	// across instances; the zero value means a burst of 10, then one every 6 seconds.
	SignInsPerClient Limit
	// SignInsPerShop limits successful sign-ins to one shop, across instances; the zero
	// value means a burst of 20, then one every 3 minutes.
	SignInsPerShop Limit
	// Waves tells when each open slot's next offer wave is due (an
	// *offers.WaveSchedule over the server's River client). Required.
	Waves WaveSchedule
	// AccountIssue reads the provider's code of a shop's SMS problem as what the owner
	// has to change (twilio.AccountIssueOf); nil gives every problem the general hint.
	AccountIssue func(code int) sms.AccountIssue
	// Hooks manages the shops' outbound webhook endpoints, on the Integrations page;
	// nil leaves them out of it.
	Hooks *hooks.Service
	// PublicURL is the server's external base URL: the calendar feed's address, and the
	// booking systems' webhook URLs.
	PublicURL string
	// JoinPages says the server serves the shops' join pages (internal/join/page): the
	// settings page shows the counter card, the page's address and its QR code.
	JoinPages bool
	// Inbox is the owner's inbox: its page, and the unread count in the navigation;
	// nil leaves both out.
	Inbox *inbox.Service
	// Senders shows the shop's sender and its A2P registration on the settings page, and
	// refuses openings under SMS_US_A2P=required (sender.go); nil leaves both out.
	Senders *senders.Service
	// Customers are the shop's customers (required); Erasure erases one at the owner's
	// request (required).
	Customers *customers.Service
	Erasure   *erasure.Service
	// Book is the shop's appointment book: the Book page (a day per person, with "Offer
	// it") and the booking systems' connectors on the Integrations page; nil leaves both
	// out.
	Book *book.Service
	// Offers is the offers' record: an opening's record page with "why not …?", and a
	// customer's offers on their page; nil leaves them out.
	Offers *offers.Service
	// Ledger marks the filled slots' attendance (their Came / No-show buttons); nil
	// leaves the buttons out.
	Ledger *ledger.Service
	// Stats are the shop's recovery figures: the Figures page (funnel, charts, table and
	// CSV); nil leaves it out.
	Stats *stats.Service
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// WaveSchedule tells when openings' next offer waves are due. The waves are the offer
// loop's River jobs: offers knows their arguments, the dashboard only asks.
type WaveSchedule interface {
	NextWaves(ctx context.Context, openingIDs []uuid.UUID) (map[uuid.UUID]offers.ScheduledWave, error)
}

// Dashboard serves the owners' pages. Build it with New and mount it with Register.
type Dashboard struct {
	pool  *pgxpool.Pool
	shops *shops.Service
	// customerSvc and erasure are cfg's Customers and Erasure.
	customerSvc *customers.Service
	erasure     *erasure.Service
	openings    *slots.Service
	// catalog is the shop's staff and services (the same rules as the API's).
	catalog *catalog.Catalog
	cfg     Config
	log     *slog.Logger
	static  fs.FS
	version string // of the static assets, for cache busting
	limits  *ratelimit.Limiter
}

// New returns a Dashboard reading from pool and acting through shopsSvc and openings.
func New(pool *pgxpool.Pool, shopsSvc *shops.Service, openings *slots.Service, cfg Config) (*Dashboard, error) {
	if pool == nil || shopsSvc == nil || openings == nil {
		return nil, errors.New("dashboard: pool, shops and openings are required")
	}
	if len(cfg.SessionSecret) < 32 {
		return nil, errors.New("dashboard: SessionSecret must be at least 32 bytes")
	}
	if cfg.Redis == nil {
		return nil, errors.New("dashboard: Redis is required (it counts sign-in attempts)")
	}
	if cfg.Waves == nil {
		return nil, errors.New("dashboard: Waves is required (it tells when the next offer wave is due)")
	}
	if cfg.Customers == nil || cfg.Erasure == nil {
		return nil, errors.New("dashboard: Customers and Erasure are required")
	}
	if cfg.SignInsPerClient == (Limit{}) {
		cfg.SignInsPerClient = Limit{Burst: 10, Every: 6 * time.Second}
	}
	if cfg.SignInsPerShop == (Limit{}) {
		cfg.SignInsPerShop = Limit{Burst: 20, Every: 3 * time.Minute}
	}
	for _, l := range []Limit{cfg.SignInsPerClient, cfg.SignInsPerShop} {
		if l.Burst < 1 || l.Every <= 0 {
			return nil, errors.New("dashboard: a sign-in limit needs Burst >= 1 and Every > 0")
		}
	}
	cfg.SessionSecret = bytes.Clone(cfg.SessionSecret)
	cfg.SessionTTL = cmp.Or(cfg.SessionTTL, 12*time.Hour)
	cfg.RefreshEvery = cmp.Or(cfg.RefreshEvery, 15*time.Second)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Dashboard{pool: pool, shops: shopsSvc, customerSvc: cfg.Customers, erasure: cfg.Erasure, openings: openings,
		catalog: catalog.New(pool, cfg.Now),
		cfg:     cfg, log: cfg.Logger, limits: ratelimit.New(cfg.Redis, ratelimit.Config{Prefix: cfg.KeyPrefix})}
	var err error
	if d.static, err = fs.Sub(assets, "static"); err != nil {
		return nil, fmt.Errorf("dashboard: static assets: %w", err)
	}
	if d.version, err = assetVersion(d.static); err != nil {
		return nil, err
	}
	return d, nil
}

// Register adds the dashboard's routes to e:
//
//	GET  /dashboard                       the page (redirects to the login when signed out)
//	GET  /dashboard/login                 the sign-in form
//	POST /dashboard/login                 sign in with the shop's API key
//	POST /dashboard/logout                sign out
//	POST /dashboard/openings              declare an opening
//	POST /dashboard/openings/:id/cancel   cancel an opening
//	POST /dashboard/refunds/:id/done      a failed refund was made by hand
//	GET  /dashboard/export.csv            filled slots, ?from=YYYY-MM-DD&to=YYYY-MM-DD
//	GET  /dashboard/customers             the customer list (?q=, ?status=, ?cursor=)
//	POST /dashboard/customers/export.csv  the customers, in the import's columns (confirmed with the key; recorded)
//	POST /dashboard/customers/import      a CSV upload (multipart: csrf, then file)
//	GET  /dashboard/customers/:id         a customer's form
//	POST /dashboard/customers/:id         save it
//	POST /dashboard/customers/:id/erase   erase the customer
//	POST /dashboard/customers/:id/reassigned_checked  the number is still theirs
//	GET  /dashboard/staff                 the shop's people, with add and rename forms
//	POST /dashboard/staff                 add a person
//	POST /dashboard/staff/:id             rename (name), or make active or inactive (active=yes|no)
//	GET  /dashboard/services              the shop's services, with the add form
//	POST /dashboard/services              add a service
//	GET  /dashboard/services/:id          a service's form
//	POST /dashboard/services/:id          save it
//	GET  /dashboard/settings              the shop's settings form
//	POST /dashboard/settings              save it
//	POST /dashboard/settings/rotate-key   a new API key, shown once; ends other sessions
//	POST /dashboard/settings/notify-phone the code texted to a new alert number
//	GET  /dashboard/book                  the appointment book, a day per person (?day=YYYY-MM-DD)
//	POST /dashboard/book/:id/offer        "Offer it": declare a cancelled appointment's waiting opening
//	GET  /dashboard/integrations          the calendar feed, the booking systems and the webhook endpoints
//	POST /dashboard/integrations/connectors          add a booking system; its URL and secret, shown once
//	POST /dashboard/integrations/connectors/:id/key  give or replace a Square connector's signature key
//	POST /dashboard/integrations/connectors/:id/delete  (confirmed)
//	POST /dashboard/integrations/calendar            full names in the feed, or not
//	POST /dashboard/integrations/calendar/rotate     a new feed address (confirmed)
//	POST /dashboard/integrations/endpoints           add an endpoint; its secret, shown once
//	POST /dashboard/integrations/endpoints/:id/enable, /disable
//	POST /dashboard/integrations/endpoints/:id/rotate-secret   a new secret, shown once (confirmed)
//	POST /dashboard/integrations/endpoints/:id/delete          (confirmed)
//	POST /dashboard/integrations/endpoints/:id/deliveries/:delivery_id/retry   send again
//	GET  /dashboard/inbox                 the conversations (?status=open|closed|all, ?cursor=)
//	GET  /dashboard/inbox/:id             a thread, oldest first; viewing it marks it read
//	POST /dashboard/inbox/:id/reply       the owner's reply, texted from the shop's number
//	POST /dashboard/inbox/:id/status      close or reopen it
//	GET  /dashboard/static/*              embedded CSS, JavaScript and icon
//
// Any other path under /dashboard gets an HTML 404 page (and /dashboard itself an HTML
// 405 for other methods), so the global JSON error handler never answers a browser here.
func (d *Dashboard) Register(e *echo.Echo) {
	e.GET("/dashboard", d.page(d.signedIn(d.home)))
	e.GET("/dashboard/", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/dashboard") })
	e.Match([]string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, "/dashboard", d.page(d.methodNotAllowed))
	e.GET("/dashboard/login", d.page(d.loginForm))
	e.POST("/dashboard/login", d.page(d.login))
	e.POST("/dashboard/logout", d.page(d.logout))
	e.POST("/dashboard/openings", d.page(d.signedIn(d.withCSRF(d.declare))))
	e.POST("/dashboard/openings/:id/cancel", d.page(d.signedIn(d.withCSRF(d.cancel))))
	e.POST("/dashboard/refunds/:id/done", d.page(d.signedIn(d.withCSRF(d.refundDone))))
	e.GET("/dashboard/export.csv", d.page(d.signedIn(d.export)))
	e.GET("/dashboard/customers", d.page(d.signedIn(d.customers)))
	e.POST(CustomersExportPath, d.page(d.signedIn(d.withCSRF(d.exportCustomers))))
	e.POST(ImportPath, d.page(d.signedIn(d.importCustomers)))
	e.GET("/dashboard/customers/:id", d.page(d.signedIn(d.customerPage)))
	e.POST("/dashboard/customers/:id", d.page(d.signedIn(d.withCSRF(d.saveCustomer))))
	e.POST("/dashboard/customers/:id/erase", d.page(d.signedIn(d.withCSRF(d.eraseCustomer))))
	e.POST("/dashboard/customers/:id/reassigned_checked", d.page(d.signedIn(d.withCSRF(d.reassignedChecked))))
	e.POST("/dashboard/customers/:id/clear_no_shows", d.page(d.signedIn(d.withCSRF(d.clearNoShows))))
	e.GET(OpeningPath+"/:id", d.page(d.signedIn(d.openingRecord)))
	e.POST("/dashboard/bookings/:id/attendance", d.page(d.signedIn(d.withCSRF(d.markAttendance))))
	e.POST("/dashboard/bookings/:id/late_cancel", d.page(d.signedIn(d.withCSRF(d.lateCancel))))
	if d.cfg.Stats != nil {
		e.GET(StatsPath, d.page(d.signedIn(d.statsPage)))
		e.GET(StatsPath+".csv", d.page(d.signedIn(d.statsCSV)))
	}
	e.GET(StaffPath, d.page(d.signedIn(d.staffPage)))
	e.POST(StaffPath, d.page(d.signedIn(d.withCSRF(d.addStaff))))
	e.POST(StaffPath+"/:id", d.page(d.signedIn(d.withCSRF(d.saveStaff))))
	e.GET(ServicesPath, d.page(d.signedIn(d.servicesPage)))
	e.POST(ServicesPath, d.page(d.signedIn(d.withCSRF(d.addService))))
	e.GET(ServicesPath+"/:id", d.page(d.signedIn(d.servicePage)))
	e.POST(ServicesPath+"/:id", d.page(d.signedIn(d.withCSRF(d.saveService))))
	e.GET("/dashboard/settings", d.page(d.signedIn(d.settings)))
	e.POST("/dashboard/settings", d.page(d.signedIn(d.withCSRF(d.saveSettings))))
	e.POST("/dashboard/settings/rotate-key", d.page(d.signedIn(d.withCSRF(d.rotateKey))))
	e.POST(NotifyPhoneConfirmPath, d.page(d.signedIn(d.withCSRF(d.confirmNotifyPhone))))
	if d.cfg.Book != nil {
		e.GET(BookPath, d.page(d.signedIn(d.bookDay)))
		e.POST(BookPath+"/:id/offer", d.page(d.signedIn(d.withCSRF(d.offerAppointment))))
		e.POST(BookPath+"/:id/copied", d.page(d.signedIn(d.withCSRF(d.markCopied))))
		e.POST(IntegrationsPath+"/connectors", d.page(d.signedIn(d.withCSRF(d.createConnector))))
		e.POST(IntegrationsPath+"/connectors/:id/key", d.page(d.signedIn(d.withCSRF(d.connectorAction(d.setConnectorKey)))))
		e.POST(IntegrationsPath+"/connectors/:id/api_key", d.page(d.signedIn(d.withCSRF(d.connectorAction(d.setConnectorAPIKey)))))
		e.POST(IntegrationsPath+"/connectors/:id/delete", d.page(d.signedIn(d.withCSRF(d.connectorAction(d.deleteConnector)))))
	}
	e.GET(IntegrationsPath, d.page(d.signedIn(d.integrations)))
	e.POST(IntegrationsPath+"/calendar", d.page(d.signedIn(d.withCSRF(d.saveCalendar))))
	e.POST(IntegrationsPath+"/calendar/rotate", d.page(d.signedIn(d.withCSRF(d.rotateCalendar))))
	e.POST(IntegrationsPath+"/endpoints", d.page(d.signedIn(d.withCSRF(d.createEndpoint))))
	e.POST(IntegrationsPath+"/endpoints/:id/enable", d.page(d.signedIn(d.withCSRF(d.setDisabled(false)))))
	e.POST(IntegrationsPath+"/endpoints/:id/disable", d.page(d.signedIn(d.withCSRF(d.setDisabled(true)))))
	e.POST(IntegrationsPath+"/endpoints/:id/rotate-secret", d.page(d.signedIn(d.withCSRF(d.endpointAction(d.rotateSecret)))))
	e.POST(IntegrationsPath+"/endpoints/:id/delete", d.page(d.signedIn(d.withCSRF(d.endpointAction(d.deleteEndpoint)))))
	e.POST(IntegrationsPath+"/endpoints/:id/deliveries/:delivery_id/retry", d.page(d.signedIn(d.withCSRF(d.endpointAction(d.resend)))))
	if d.cfg.Inbox != nil {
		e.GET(InboxPath, d.page(d.signedIn(d.inboxList)))
		e.GET(InboxPath+"/:id", d.page(d.signedIn(d.thread)))
		e.POST(InboxPath+"/:id/reply", d.page(d.signedIn(d.withCSRF(d.reply))))
		e.POST(InboxPath+"/:id/status", d.page(d.signedIn(d.withCSRF(d.setConversationStatus))))
	}
	e.GET("/dashboard/static/*", d.serveStatic)
	e.Any("/dashboard/*", d.page(d.notFound))
}

// logger is the request's logger (carrying its request id) when the server set one,
// else the dashboard's.
func (d *Dashboard) logger(c echo.Context) *slog.Logger {
	if l, ok := c.Get(httperr.LoggerKey).(*slog.Logger); ok && l != nil {
		return l
	}
	return d.log
}

// contentSecurityPolicy allows only the dashboard's own files: no inline script or
// style, no framing, forms posting only back here (and the Stripe onboarding form's
// redirect to Stripe: form-action governs a form's redirects too).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self' " + stripeOrigin + "; frame-ancestors 'none'; base-uri 'none'"

// page sets the headers every dashboard answer carries. Pages hold customer data, so
// nothing is cached.
func (d *Dashboard) page(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}

// ctxSession is the echo context key of the signed-in shop.
const ctxSession = "dashboard.session"

// signedIn is what a handler behind the session check receives.
type signedIn struct {
	Shop    shops.Shop
	Session session
	CSRF    string
}

func current(c echo.Context) *signedIn { return c.Get(ctxSession).(*signedIn) }

// signedIn lets the request through only with a valid, unexpired session cookie of an
// existing shop, signed in under the shop's current API key; anyone else is sent to the
// sign-in form.
func (d *Dashboard) signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s, ok := d.sessionFrom(c)
		if !ok {
			return c.Redirect(http.StatusSeeOther, loginPath)
		}
		shop, live, err := d.sessionShop(c.Request().Context(), s)
		if err != nil {
			return d.unavailable(c, "check session", err)
		}
		if !live {
			c.SetCookie(d.expiredCookie(sessionCookie, cookiePath))
			return c.Redirect(http.StatusSeeOther, loginPath)
		}
		c.Set(ctxSession, &signedIn{Shop: shop, Session: s, CSRF: d.csrfToken(s)})
		return next(c)
	}
}

// sessionShop returns the shop of s. live is false when s signed out, the shop is gone,
// or its API key was rotated since s signed in: the session is over. The shop row is
// read on every signed-in request anyway (the page needs it), and the sign-out record
// with it, so a sign-out or a rotation ends the session on every instance at its commit,
// at no extra round trip. err is set only when Postgres could not say: then no session
// is honoured.
func (d *Dashboard) sessionShop(ctx context.Context, s session) (shop shops.Shop, live bool, err error) {
	shop, ended, err := d.shops.SessionShop(ctx, s.ShopID, s.ID)
	if p, isProblem := problem.As(err); isProblem && p.Kind == problem.NotFound {
		return shops.Shop{}, false, nil
	}
	if err != nil {
		return shops.Shop{}, false, err
	}
	if ended {
		return shops.Shop{}, false, nil
	}
	// Any difference ends the session, not only an older version: a version this shop
	// never had is not one to trust.
	if s.KeyVersion != shop.KeyVersion {
		return shops.Shop{}, false, nil
	}
	return shop, true, nil
}

// sessionFrom returns the session the request's cookie names, when the cookie is
// valid and unexpired. Whether it signed out is sessionShop's to say.
func (d *Dashboard) sessionFrom(c echo.Context) (session, bool) {
	ck, err := c.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	return d.decodeSession(ck.Value, d.cfg.Now())
}

// withCSRF refuses a POST whose form does not carry the session's CSRF token.
func (d *Dashboard) withCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if ok, err := d.readForm(c); !ok {
			return err
		}
		if !validCSRF(c.FormValue("csrf"), current(c).CSRF) {
			return d.errorPage(c, http.StatusForbidden, "This form has expired",
				"The form was missing its security token, or it came from an old page. Go back, reload the page and try again.")
		}
		return next(c)
	}
}

// MaxFormBytes caps the body of every dashboard form but the CSV import (which has
// MaxImportBytes): the forms are a few fields of text.
const MaxFormBytes = 64 << 10

// readForm parses the request's form, reading at most MaxFormBytes of its body, before
// any field is asked for: echo's FormValue would otherwise take up to 32 MiB of a
// multipart body into memory, whatever limit the server in front meant to set. A larger
// body gets a 413 page, and ok is false (err is the page's). A form that cannot be read
// otherwise is left to the CSRF check, which finds no token in it.
func (d *Dashboard) readForm(c echo.Context) (ok bool, err error) {
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, MaxFormBytes)
	// ParseMultipartForm parses an urlencoded body too, but then returns ErrNotMultipart
	// in place of the body's own error.
	if mt, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType)); mt == echo.MIMEMultipartForm {
		err = req.ParseMultipartForm(MaxFormBytes)
	} else {
		err = req.ParseForm()
	}
	var mbe *http.MaxBytesError
	var he *echo.HTTPError // the server's own body limit, if it is the lower
	if errors.As(err, &mbe) || errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
		return false, d.errorPage(c, http.StatusRequestEntityTooLarge, "This form is too large",
			"The form sent more than the dashboard accepts. Go back, shorten what you typed and try again.")
	}
	return true, nil
}

// loginView is the sign-in page's data.
type loginView struct {
	CSRF  string
	Error string
}

func (d *Dashboard) loginForm(c echo.Context) error {
	// A live session goes on to the dashboard. When Postgres cannot tell, show the form;
	// a session that ended (signed out, or the key was rotated) is cleared here, or the
	// dashboard and this form would send a browser that kept it back and forth.
	if s, ok := d.sessionFrom(c); ok {
		_, live, err := d.sessionShop(c.Request().Context(), s)
		if err == nil && live {
			return c.Redirect(http.StatusSeeOther, "/dashboard")
		}
		if err == nil {
			c.SetCookie(d.expiredCookie(sessionCookie, cookiePath))
		}
	}
	nonce, err := d.loginNonce(c)
	if err != nil {
		return d.internalError(c, "login nonce", err)
	}
	return d.render(c, http.StatusOK, "Sign in", loginView{CSRF: d.loginToken(nonce)})
}

// loginNonce returns the nonce of the login cookie, setting a new cookie when there is
// none, so that several open login tabs keep working.
func (d *Dashboard) loginNonce(c echo.Context) (string, error) {
	if ck, err := c.Cookie(loginCookie); err == nil && len(ck.Value) == 32 {
		return ck.Value, nil
	}
	nonce, err := randomHex(16)
	if err != nil {
		return "", err
	}
	c.SetCookie(d.cookie(loginCookie, nonce, loginPath, loginCookieTTL))
	return nonce, nil
}

func (d *Dashboard) login(c echo.Context) error {
	// Every attempt counts against the client's address before any work is done: a
	// guess costs a database lookup. (Keys are 256-bit random, so guessing one is
	// hopeless anyway; the limit keeps floods off Postgres.) c.RealIP is the proxy's
	// X-Forwarded-For only when the server trusts the proxy (see cmd/server's routes).
	// The count is in Redis, shared by every instance; when Redis cannot be asked no
	// attempt goes through (fail closed), since an uncounted attempt is a free guess.
	ctx := c.Request().Context()
	res, err := d.limits.Allow(ctx, signInClientKey(c.RealIP()), d.cfg.SignInsPerClient)
	if err != nil {
		return d.signInUnavailable(c, err)
	}
	if !res.Allowed {
		d.logger(c).Warn("dashboard sign-in limited", "by", "client")
		return d.tooManySignIns(c, res.RetryAfter, "Too many sign-in attempts from your network.")
	}
	if ok, err := d.readForm(c); !ok {
		return err
	}
	ck, err := c.Cookie(loginCookie)
	if err != nil || !validCSRF(c.FormValue("csrf"), d.loginToken(ck.Value)) {
		return d.errorPage(c, http.StatusForbidden, "This form has expired",
			"The sign-in form was missing its security token or is too old. Open the sign-in page again and retry.")
	}
	key := strings.TrimSpace(c.FormValue("api_key"))
	shop, err := d.shops.Authenticate(ctx, key)
	if errors.Is(err, shops.ErrUnauthorized) {
		msg := "That API key is not valid. Paste the key you were given when the shop was created."
		if key == "" {
			msg = "Enter your shop's API key."
		}
		return d.render(c, http.StatusUnauthorized, "Sign in", loginView{CSRF: d.loginToken(ck.Value), Error: msg})
	}
	if err != nil {
		return d.internalError(c, "authenticate", err)
	}
	// Keys do not name their shop, so only good keys can be counted per shop: this caps
	// the sessions minted for one shop, whoever holds its key and from however many
	// addresses.
	res, err = d.limits.Allow(ctx, signInShopKey(shop.ID.String()), d.cfg.SignInsPerShop)
	if err != nil {
		return d.signInUnavailable(c, err)
	}
	if !res.Allowed {
		d.logger(c).Warn("dashboard sign-in limited", "by", "shop", "shop_id", shop.ID)
		return d.tooManySignIns(c, res.RetryAfter, "Too many sign-ins to this shop.")
	}
	s, err := d.newSession(shop.ID, shop.KeyVersion)
	if err != nil {
		return d.internalError(c, "new session", err)
	}
	c.SetCookie(d.cookie(sessionCookie, d.encodeSession(s), cookiePath, d.cfg.SessionTTL))
	c.SetCookie(d.expiredCookie(loginCookie, loginPath))
	d.logger(c).Info("dashboard sign-in", "shop_id", shop.ID)
	return c.Redirect(http.StatusSeeOther, "/dashboard")
}

// logout ends the session: it is recorded as signed out in Postgres until it would
// have expired, so a copy of the cookie (another tab, a stolen copy) is refused from now
// on, by every instance, whatever becomes of Redis; and the browser's cookie is cleared.
// The shop's other sessions (other devices) go on.
func (d *Dashboard) logout(c echo.Context) error {
	s, ok := d.sessionFrom(c)
	if !ok {
		c.SetCookie(d.expiredCookie(sessionCookie, cookiePath))
		return c.Redirect(http.StatusSeeOther, loginPath)
	}
	if ok, err := d.readForm(c); !ok {
		return err
	}
	if !validCSRF(c.FormValue("csrf"), d.csrfToken(s)) {
		return d.errorPage(c, http.StatusForbidden, "This form has expired",
			"The form was missing its security token, or it came from an old page. Go back, reload the page and try again.")
	}
	// The cookie is cleared only once the end is recorded: a sign-out that looks done
	// but left copies working would be worse than one that asks to be retried.
	// Kept a minute past the cookie's expiry, for instances whose clocks differ a little.
	if err := d.shops.EndSession(c.Request().Context(), s.ShopID, s.ID, s.Expires.Add(time.Minute)); err != nil {
		return d.unavailable(c, "end session", err)
	}
	c.SetCookie(d.expiredCookie(sessionCookie, cookiePath))
	d.logger(c).Info("dashboard sign-out", "shop_id", s.ShopID)
	return c.Redirect(http.StatusSeeOther, loginPath)
}

func (d *Dashboard) methodNotAllowed(c echo.Context) error {
	c.Response().Header().Set("Allow", http.MethodGet)
	return d.errorPage(c, http.StatusMethodNotAllowed, "Not allowed", "This page can only be viewed. Go back to the dashboard and use its forms.")
}

func (d *Dashboard) notFound(c echo.Context) error {
	return d.errorPage(c, http.StatusNotFound, "Page not found", "There is nothing here. It may belong to another shop, or the link is wrong.")
}

// internalError logs err and answers a plain 500 page that reveals nothing of it.
func (d *Dashboard) internalError(c echo.Context, what string, err error) error {
	d.logger(c).Error("dashboard "+what, "err", err, "path", c.Request().URL.Path)
	return d.errorPage(c, http.StatusInternalServerError, "Something went wrong", "internal error")
}

// unavailable logs err and answers a 503 page: Postgres, which says which sessions
// signed out, could not be asked, and a session is not honoured unchecked.
func (d *Dashboard) unavailable(c echo.Context, what string, err error) error {
	d.logger(c).Error("dashboard "+what, "err", err, "path", c.Request().URL.Path)
	c.Response().Header().Set("Retry-After", "30")
	return d.errorPage(c, http.StatusServiceUnavailable, "Try again in a moment",
		"The dashboard cannot check your session right now. Wait a moment and reload the page.")
}

// signInUnavailable logs err and answers a 503 sign-in form: Redis, which counts the
// attempts, could not be asked, and an attempt is not let through uncounted.
func (d *Dashboard) signInUnavailable(c echo.Context, err error) error {
	d.logger(c).Error("dashboard sign-in limit", "err", err)
	c.Response().Header().Set("Retry-After", "30")
	v := loginView{Error: "Signing in is not possible for a moment. Wait half a minute and try again."}
	if ck, err := c.Cookie(loginCookie); err == nil {
		v.CSRF = d.loginToken(ck.Value)
	}
	return d.render(c, http.StatusServiceUnavailable, "Sign in", v)
}

// tooManySignIns answers 429 with the sign-in form, a message saying when to retry, and
// Retry-After.
func (d *Dashboard) tooManySignIns(c echo.Context, wait time.Duration, why string) error {
	secs := int((wait + time.Second - 1) / time.Second)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	msg := why + " Wait " + formatWait(wait) + " and try again."
	v := loginView{Error: msg}
	if ck, err := c.Cookie(loginCookie); err == nil {
		v.CSRF = d.loginToken(ck.Value)
	}
	return d.render(c, http.StatusTooManyRequests, "Sign in", v)
}

// formatWait says how long to wait in words: "10 seconds", "3 minutes".
func formatWait(d time.Duration) string {
	if d <= time.Minute {
		return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second))) + " seconds"
	}
	return strconv.Itoa(int((d+time.Minute-1)/time.Minute)) + " minutes"
}

// errorView is the error page's data.
type errorView struct {
	Status  int
	Heading string
	Message string
}

func (d *Dashboard) errorPage(c echo.Context, status int, heading, message string) error {
	return d.render(c, status, heading, errorView{Status: status, Heading: heading, Message: message})
}

func assetVersion(static fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(static, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("dashboard: hash static assets: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// serveStatic serves the embedded assets. Their URLs carry a version, so they may be
// cached for long.
func (d *Dashboard) serveStatic(c echo.Context) error {
	name := c.Param("*")
	types := map[string]string{
		".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml",
	}
	var ctype string
	for ext, t := range types {
		if strings.HasSuffix(name, ext) {
			ctype = t
		}
	}
	b, err := fs.ReadFile(d.static, name)
	if ctype == "" || err != nil || strings.Contains(name, "..") {
		return d.page(d.notFound)(c)
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, ctype, b)
}
