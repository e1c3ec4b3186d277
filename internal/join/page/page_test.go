package page_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	qrcode "github.com/skip2/go-qrcode"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/join/page"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/ratelimit"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type env struct {
	pool *pgxpool.Pool
	shop shops.Shop
	srv  *httptest.Server
}

func setup(t *testing.T) *env {
	t.Helper()
	pool, _ := pgtest.New(t)
	rdb, prefix := redistest.New(t)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	sh := shops.New(pool, shops.Config{})
	shop, _, err := sh.Create(context.Background(), shops.NewShop{Name: "Joe's Barbers", Timezone: "America/New_York",
		SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	privacy := "https://joes.example/privacy"
	shop, err = sh.Update(context.Background(), shop.ID, shops.ShopChange{PrivacyURL: &privacy})
	require.NoError(t, err)
	j := join.New(pool, queue, customertest.New(t, pool), join.Config{Limits: join.Limits{
		Limiter: ratelimit.New(rdb, ratelimit.Config{Prefix: prefix})}})
	p, err := page.New(sh, j, page.Config{Secret: []byte(strings.Repeat("s", 32)), PublicURL: "https://slots.example/"})
	require.NoError(t, err)
	e := echo.New()
	e.IPExtractor = echo.ExtractIPDirect()
	p.Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &env{pool: pool, shop: shop, srv: srv}
}

func client(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	res, err := c.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	res, err := c.PostForm(u, form)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (e *env) count(t *testing.T, sql string) int {
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), sql).Scan(&n))
	return n
}

// TestPage: the page is the shop's, in its language or the one asked for, with the whole
// disclosure, the privacy link, a CSRF token and the honeypot, under a CSP that allows
// no script; an unknown slug is a 404.
func TestPage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := client(t)
	res, body := get(t, c, e.srv.URL+"/join/"+e.shop.Slug)
	require.Equal(t, http.StatusOK, res.StatusCode)
	csp := res.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.NotContains(t, csp, "unsafe-inline")
	require.Equal(t, "DENY", res.Header.Get("X-Frame-Options"))
	require.NotContains(t, body, "<script")
	require.NotContains(t, body, "style=")
	require.Contains(t, body, `<html lang="en">`)
	require.Contains(t, body, "Join Joe&#39;s Barbers&#39;s list")
	for _, must := range []string{"Msg &amp; data rates may apply", "HELP for help", "STOP to cancel",
		"Consent is not a condition of purchase", "about 2 a week", `href="https://joes.example/privacy"`,
		`name="website"`, `maxlength="100"`, `type="tel"`} {
		require.Contains(t, body, must)
	}
	require.Regexp(t, csrfRe, body)

	for lang, words := range map[language.Code]string{language.Spanish: "Únete a la lista", language.French: "Rejoindre la liste"} {
		_, body = get(t, c, e.srv.URL+"/join/"+e.shop.Slug+"?lang="+string(lang))
		require.Contains(t, body, `<html lang="`+string(lang)+`">`)
		require.Contains(t, body, words)
		require.Contains(t, body, `<option value="`+string(lang)+`" selected>`)
	}
	res, _ = get(t, c, e.srv.URL+"/join/nobody-here")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	res, css := get(t, c, e.srv.URL+"/join/"+e.shop.Slug+"/join.css")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/css")
	require.Contains(t, css, ".hp{")
}

// TestSubmit: a good submission answers "check your phone" and stores a request; one
// without the CSRF token, or with wrong fields, is shown again with the error next to the
// field and stores nothing; a bot's (the honeypot filled) reads exactly as a good one.
func TestSubmit(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := client(t)
	u := e.srv.URL + "/join/" + e.shop.Slug
	_, body := get(t, c, u)
	token := csrfRe.FindStringSubmatch(body)[1]
	good := url.Values{"csrf": {token}, "name": {"Ana"}, "phone": {"(555) 555-0123"}, "language": {"en"}, "consent": {"yes"}}

	noToken := url.Values{"name": {"Ana"}, "phone": {"(555) 555-0123"}, "consent": {"yes"}}
	res, body := post(t, c, u, noToken)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Contains(t, body, `id="join-form-error"`)
	require.Contains(t, body, `value="Ana"`, "what was typed is kept")
	foreign := client(t) // another browser: the token is not its cookie's
	_, _ = get(t, foreign, u)
	res, _ = post(t, foreign, u, good)
	require.Equal(t, http.StatusForbidden, res.StatusCode)

	bad := url.Values{"csrf": {token}, "name": {""}, "phone": {"call me"}, "language": {"es"}}
	res, body = post(t, c, u, bad)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, body, `<p class="error" id="join-name-error">Escribe tu nombre`)
	require.Contains(t, body, `<p class="error" id="join-phone-error">Escribe un número de móvil, como (555) 555-0123.</p>`)
	require.Contains(t, body, `id="join-consent-error"`)
	require.Contains(t, body, `aria-invalid="true"`)
	require.Equal(t, 0, e.count(t, `SELECT count(*) FROM join_requests`))

	res, okBody := post(t, c, u, good)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, okBody, `id="join-done"`)
	require.Regexp(t, `id="join-stopped">Said STOP to .+ before\? Text START to \+[0-9]+ and you join at once\.<`, okBody,
		"every visitor reads how a number that said STOP joins")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM join_requests`))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM river_job WHERE kind = 'sms_text'`))

	bot := url.Values{"csrf": {token}, "name": {"Bot"}, "phone": {"(555) 555-0124"}, "language": {"en"}, "consent": {"yes"},
		"website": {"http://spam.example"}}
	res, botBody := post(t, c, u, bot)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, okBody, botBody, "a refusal reads exactly as a text sent")
	res, againBody := post(t, c, u, good) // the same number again today: refused
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, okBody, againBody)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM join_requests`))

	huge := url.Values{"csrf": {token}, "name": {strings.Repeat("x", page.MaxFormBytes)}}
	res, _ = post(t, c, u, huge)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
}

// TestQR: the QR code is an SVG of exactly the modules that encode the page's address
// under PUBLIC_URL; an unknown slug has none.
func TestQR(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := client(t)
	res, body := get(t, c, e.srv.URL+"/join/"+e.shop.Slug+"/qr.svg")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "image/svg+xml", res.Header.Get("Content-Type"))
	var doc struct {
		ViewBox string `xml:"viewBox,attr"`
		Path    struct {
			D string `xml:"d,attr"`
		} `xml:"path"`
	}
	require.NoError(t, xml.Unmarshal([]byte(body), &doc))
	want, err := qrcode.New("https://slots.example/join/"+e.shop.Slug, qrcode.Medium)
	require.NoError(t, err)
	bitmap := want.Bitmap()
	n := len(bitmap)
	require.Equal(t, fmt.Sprintf("0 0 %d %d", n, n), doc.ViewBox)
	got := make([][]bool, n)
	for i := range got {
		got[i] = make([]bool, n)
	}
	for _, run := range strings.Split(strings.TrimSuffix(doc.Path.D, "z"), "z") {
		var x, y, w int
		_, err := fmt.Sscanf(run, "M%d %dh%d", &x, &y, &w)
		require.NoError(t, err, run)
		for i := range w {
			got[y][x+i] = true
		}
	}
	require.Equal(t, bitmap, got, "the modules of the page's address")
	res, _ = get(t, c, e.srv.URL+"/join/nobody-here/qr.svg")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
