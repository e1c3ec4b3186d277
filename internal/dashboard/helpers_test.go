package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	apptbook "github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/dashboard"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/join"
	joinpage "github.com/slotrecovery/slotrecovery/internal/join/page"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/stats"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// secret is the test SESSION_SECRET.
var secret = []byte("0123456789abcdef0123456789abcdef-test")

// clock is a settable clock shared by the services and the dashboard.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// env is one test's world: its own database, two shops (A in New York paying by
// checkout in USD, B in London in EUR without payments), and the dashboard on echo.
// replyRules refuses owners' replies with err while it is set (inbox.ReplyRules).
type replyRules struct {
	mu  sync.Mutex
	err error
}

func (r *replyRules) set(err error) { r.mu.Lock(); r.err = err; r.mu.Unlock() }

func (r *replyRules) CheckReply(context.Context, uuid.UUID, uuid.UUID, time.Time, time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

type env struct {
	// replyRules are the owners' replies' rules the inbox holds them to.
	replyRules *replyRules
	pool       *pgxpool.Pool
	dbURL      string
	clock      *clock
	shops      *shops.Service
	customers  *customers.Service
	erasure    *erasure.Service
	slots      *slots.Service
	river      *river.Client[pgx.Tx]
	waves      *offers.WaveSchedule
	dash       *dashboard.Dashboard
	e          *echo.Echo
	shopA      shops.Shop
	keyA       string
	shopB      shops.Shop
	keyB       string
	secure     bool
	redis      redis.UniversalClient
	prefix     string
	hooks      *hooks.Service // nil unless envOpts.hooks
	inbox      *inbox.Service
	book       *apptbook.Service
	// offers sends waves through a texter that only counts (the record's page reads
	// them); ledger marks attendance.
	offers *offers.Service
	ledger *ledger.Service
	join   *join.Service
}

// countingTexter is the offers' texter of these tests: every text "sent", with a new SID.
type countingTexter struct{ n atomic.Int64 }

func (c *countingTexter) Text(context.Context, sms.Message) (string, error) {
	return fmt.Sprintf("SM%032d", c.n.Add(1)), nil
}

// noCooldowns says no customer is cooling down.
type noCooldowns struct{}

func (noCooldowns) Cooling(context.Context, []string) (map[string]bool, error) {
	return map[string]bool{}, nil
}

type envOpts struct {
	now          time.Time // zero: the real time
	dev          bool      // cookies without Secure
	refreshEvery time.Duration
	perClient    dashboard.Limit // zero: the default
	perShop      dashboard.Limit // zero: the default
	connect      bool            // STRIPE_CONNECT=on, with a 2.5% platform fee
	hooks        bool            // outbound webhooks on the Integrations page
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	pool, dbURL := pgtest.New(t)
	ck := &clock{t: o.now}
	now := ck.Now
	if o.now.IsZero() {
		now = time.Now
	}
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	shopsSvc := shops.New(pool, shops.Config{Now: now, PaymentsEnabled: true, StripeConnect: o.connect, PlatformFeeBPS: 250})
	slotsSvc := slots.New(pool, rc, nil, nil, slots.Config{Now: now})
	custSvc := customertest.NewWith(t, pool, customers.Config{Now: now})
	erasureSvc := erasure.New(pool, custSvc, rc, erasure.Config{Now: now})
	rdb, prefix := redistest.New(t)
	// The sign-in limits' keys: go-redis/redis_rate puts them under "rate:".
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := redistest.DeletePrefix(ctx, rdb, "rate:"+prefix); err != nil {
			t.Errorf("delete rate:%s*: %v", prefix, err)
		}
	})
	waves := offers.NewWaveSchedule(rc)
	var hooksSvc *hooks.Service
	if o.hooks {
		hooksSvc = hooks.New(pool, rc, hooks.Config{Now: now})
	}
	rules := &replyRules{}
	inboxSvc := inbox.New(pool, rc, custSvc, inbox.Config{Now: now, Rules: rules})
	bookSvc := apptbook.New(pool, shopsSvc, slotsSvc, apptbook.Config{Now: now})
	joinSvc := join.New(pool, rc, custSvc, join.Config{Now: now, Limits: join.Limits{
		Limiter: ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})}})
	offersSvc := offers.New(pool, rc, &countingTexter{}, noCooldowns{}, shopsSvc, custSvc, slotsSvc, offers.Config{Now: now})
	ledgerSvc := ledger.New(pool, rc, nil, ledger.Config{Now: now})
	d, err := dashboard.New(pool, shopsSvc, slotsSvc, dashboard.Config{
		Offers: offersSvc, Ledger: ledgerSvc, Stats: stats.New(pool, stats.Config{Now: now}),
		Hooks: hooksSvc, PublicURL: "https://slots.example", Inbox: inboxSvc,
		SessionSecret: secret, Secure: !o.dev, Now: now, RefreshEvery: o.refreshEvery,
		Redis: rdb, KeyPrefix: prefix, SignInsPerClient: o.perClient, SignInsPerShop: o.perShop, Waves: waves,
		AccountIssue: twilio.AccountIssueOf, Customers: custSvc, Erasure: erasureSvc, Book: bookSvc, JoinPages: true, Queue: rc, Join: joinSvc,
	})
	require.NoError(t, err)
	e := echo.New()
	d.Register(e)
	// The shops' join pages, served beside the dashboard as the server does (the
	// settings page shows their QR code).
	joinPage, err := joinpage.New(shopsSvc, joinSvc, joinpage.Config{Secret: secret, Secure: !o.dev, Now: now})
	require.NoError(t, err)
	joinPage.Register(e)
	en := &env{replyRules: rules, pool: pool, dbURL: dbURL, clock: ck, shops: shopsSvc, customers: custSvc, erasure: erasureSvc, slots: slotsSvc, river: rc, waves: waves, dash: d, e: e, secure: !o.dev,
		redis: rdb, prefix: prefix, hooks: hooksSvc, inbox: inboxSvc, book: bookSvc, offers: offersSvc, ledger: ledgerSvc, join: joinSvc}
	ctx := context.Background()
	en.shopA, en.keyA, err = shopsSvc.Create(ctx, shops.NewShop{
		Name: "Ada's Barbers", Timezone: "America/New_York", SMSNumber: "+15555550100", Currency: "usd",
		PaymentMode: shops.PaymentCheckout,
	})
	require.NoError(t, err)
	en.shopB, en.keyB, err = shopsSvc.Create(ctx, shops.NewShop{
		Name: "Bea's Salon", Timezone: "Europe/London", SMSNumber: "+447700900100", Currency: "eur",
		PaymentMode: shops.PaymentNone,
	})
	require.NoError(t, err)
	return en
}

func (en *env) do(req *http.Request, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	for _, c := range cookies {
		if c != nil {
			req.AddCookie(c)
		}
	}
	rec := httptest.NewRecorder()
	en.e.ServeHTTP(rec, req)
	return rec
}

func (en *env) get(path string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	return en.do(httptest.NewRequest(http.MethodGet, path, nil), cookies...)
}

func (en *env) post(path string, form url.Values, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return en.do(req, cookies...)
}

// login signs in with key through the real form and returns the session cookie.
func (en *env) login(t *testing.T, key string) *http.Cookie {
	t.Helper()
	rec := en.get("/dashboard/login")
	require.Equal(t, http.StatusOK, rec.Code)
	loginCk := cookieNamed(rec, "sr_login")
	require.NotNil(t, loginCk, "login form sets its CSRF cookie")
	rec = en.post("/dashboard/login", url.Values{"csrf": {csrfIn(t, rec.Body.String())}, "api_key": {key}}, loginCk)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.Equal(t, "/dashboard", rec.Header().Get("Location"))
	ck := cookieNamed(rec, "sr_session")
	require.NotNil(t, ck)
	return ck
}

// page signs in as key's shop and returns the dashboard's HTML and its CSRF token.
func (en *env) page(t *testing.T, ck *http.Cookie, path string) (body, csrf string) {
	t.Helper()
	rec := en.get(path, ck)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	body = rec.Body.String()
	return body, csrfIn(t, body)
}

func cookieNamed(rec *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfIn(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, "page has a CSRF field")
	return html.UnescapeString(m[1])
}

// fieldError returns the message shown next to the input whose error id is id.
func fieldError(body, id string) string {
	re := regexp.MustCompile(`<p class="field-error" id="` + regexp.QuoteMeta(id) + `"><span class="vh">Error: </span>(.*?)</p>`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

func (en *env) addCustomer(t *testing.T, shop shops.Shop, phone, name string) customers.Customer {
	t.Helper()
	c, err := en.customers.Add(context.Background(), shop.ID, customers.NewCustomer{Phone: phone, Name: name, SMSOptIn: true})
	require.NoError(t, err)
	return c
}

// insertOpening writes an opening directly, so a test can place it anywhere in time.
func insertOpening(t *testing.T, pool *pgxpool.Pool, shopID uuid.UUID, startsAt, createdAt time.Time, service string, priceCents int64, status string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := pool.QueryRow(context.Background(), `
		INSERT INTO slot_openings (shop_id, starts_at, duration_minutes, service, price_cents, status, created_at, updated_at)
		VALUES ($1, $2, 30, $3, $4, $5, $6, $6) RETURNING id`,
		shopID, startsAt, service, priceCents, status, createdAt).Scan(&id)
	require.NoError(t, err)
	return id
}

// book fills an opening for customerID with a booking in status, made at bookedAt —
// what the YES flow does, written as SQL so these tests do not depend on it.
func book(t *testing.T, pool *pgxpool.Pool, openingID, customerID uuid.UUID, status string, amountCents int64, bookedAt time.Time) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	var bookingID uuid.UUID
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var shopID uuid.UUID
		var currency string
		if err := tx.QueryRow(ctx, `
			UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = $3, updated_at = $3, version = version + 1
			WHERE id = $1 RETURNING shop_id, (SELECT currency FROM shops WHERE shops.id = slot_openings.shop_id)`,
			openingID, customerID, bookedAt).Scan(&shopID, &currency); err != nil {
			return err
		}
		var confirmedAt *time.Time
		if status == ledger.BookingConfirmed {
			confirmedAt = &bookedAt
		}
		// As the YES does: a paying shop's booking is held for its payment page
		// (checkout_expires_at), a shop without payments' is confirmed at once.
		return tx.QueryRow(ctx, `
			INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at, confirmed_at,
				checkout_expires_at)
			SELECT $1, $2, $3, $4, $5, $6, $7, $7, $8, CASE WHEN sh.payment_mode <> 'none' THEN $7::timestamptz + interval '10 minutes' END
			FROM shops sh WHERE sh.id = $3 RETURNING id`,
			openingID, customerID, shopID, status, amountCents, currency, bookedAt, confirmedAt).Scan(&bookingID)
	})
	require.NoError(t, err)
	return bookingID
}

func openingStatus(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) string {
	t.Helper()
	var s string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT status FROM slot_openings WHERE id = $1`, id).Scan(&s))
	return s
}

func countOpenings(t *testing.T, pool *pgxpool.Pool, shopID uuid.UUID) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM slot_openings WHERE shop_id = $1`, shopID).Scan(&n))
	return n
}

func newEcho(d *dashboard.Dashboard) *echo.Echo {
	e := echo.New()
	d.Register(e)
	return e
}
