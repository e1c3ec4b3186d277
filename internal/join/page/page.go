// Package page serves a shop's join page, /join/<slug>: the form a visitor joins the
// shop's list with, in the shop's language or the one asked for (?lang=en|es|fr), with
// no script. It translates HTTP for internal/join, which decides. The page is protected
// like the dashboard: a strict CSP (no inline script or style), no framing, a CSRF token
// (a signed double-submit cookie), bounded inputs and a honeypot field; every
// submission that passes the form's checks is answered "check your phone", whatever
// join made of it.
package page

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Path is the join page's route; its CSS and QR code live under it.
const Path = "/join/:slug"

// MaxFormBytes bounds a submission's body.
const MaxFormBytes = 8 << 10

// contentSecurityPolicy allows the page's own stylesheet and nothing else: no script
// at all, no inline style, no framing, the form posting only back here.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// csrfCookie holds the nonce the form's token is a MAC of.
const (
	csrfCookie = "join_csrf"
	csrfTTL    = 12 * time.Hour
)

//go:embed join.css
var css []byte

// Config configures the page.
type Config struct {
	// Secret keys the CSRF tokens' MACs (SESSION_SECRET); at least 32 bytes.
	Secret []byte
	// Secure marks the cookie Secure (off only in DEV_MODE, over plain HTTP).
	Secure bool
	// Logger logs what goes wrong (never a number).
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PublicURL is the server's external address (PUBLIC_URL), which the QR code
	// encodes the page's address under.
	PublicURL string
}

// Page serves the join pages.
type Page struct {
	shops *shops.Service
	join  *join.Service
	cfg   Config
}

// New returns the join pages' handlers.
func New(sh *shops.Service, j *join.Service, cfg Config) (*Page, error) {
	if len(cfg.Secret) < 32 {
		return nil, errors.New("join page: the CSRF secret must have at least 32 bytes")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Page{shops: sh, join: j, cfg: cfg}, nil
}

// Register adds the join page's routes to e.
func (p *Page) Register(e *echo.Echo) {
	e.GET(Path, p.headers(p.show))
	e.POST(Path, p.headers(p.submit))
	e.GET(Path+"/join.css", p.stylesheet)
	e.GET(QRPath, p.qr)
}

func (p *Page) headers(next echo.HandlerFunc) echo.HandlerFunc {
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

func (p *Page) stylesheet(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	c.Response().Header().Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", css)
}

// view is what the template renders.
type view struct {
	Lang, Title, Base, CSRF string
	T                       map[string]string
	Done, NotFound          bool
	FormError               string
	Errors                  map[string]string
	Name, Phone, Disclosure string
	PrivacyURL              string
	Consent                 bool
	Languages               []languageOption
	// What the visitor may pick (optional): the shop's services and people, days, and
	// a time range (From and To, "HH:MM" or "").
	Services, Staff, Days []choice
	From, To              string
	Clock                 []string
}

// choice is one box of a group of checkboxes.
type choice struct {
	Value, Label string
	Checked      bool
}

type languageOption struct {
	Code, Name string
	Selected   bool
}

// languageNames are the languages as their speakers write them.
var languageNames = map[language.Code]string{language.English: "English", language.Spanish: "Español", language.French: "Français"}

// messageIDs are the catalogue's messages the page shows.
var messageIDs = []string{"title", "lede", "name", "phone", "phone_hint", "language", "consent", "submit", "privacy",
	"check_phone_title", "check_phone", "check_phone_stopped", "error_name", "error_phone", "error_consent", "error_form", "not_found",
	"wants", "wants_hint", "services", "staff", "days", "times", "time_from", "time_to", "any_time",
	"day_mon", "day_tue", "day_wed", "day_thu", "day_fri", "day_sat", "day_sun",
	"error_services", "error_staff", "error_days", "error_times"}

// clock are the times of day the range may start and end at: every hour.
var clock = func() []string {
	out := make([]string, 0, 25)
	for h := 0; h <= 24; h++ {
		out = append(out, shops.FormatClock(h*60))
	}
	return out
}()

func (p *Page) view(shop shops.Shop, lang language.Code, csrf string) view {
	cc := phone.CallingCode(shop.SMSNumber)
	example := "+" + cc + " …"
	if cc == "1" {
		example = "(555) 555-0123"
	}
	t := make(map[string]string, len(messageIDs))
	for _, id := range messageIDs {
		t[id] = join.Words(lang, id, "shop", shop.Name, "cc", cc, "example", example, "number", shop.SMSNumber)
	}
	v := view{Lang: string(lang), Title: t["title"], Base: "/join/" + shop.Slug, CSRF: csrf, T: t,
		Errors: map[string]string{}, Disclosure: p.join.Disclosure(shop, lang), PrivacyURL: shop.PrivacyURL}
	for _, l := range language.All {
		v.Languages = append(v.Languages, languageOption{Code: string(l), Name: languageNames[l], Selected: l == lang})
	}
	return v
}

// offer adds to v what the visitor may pick of shop's (join.Choices), with w's picks
// checked. Only a form shown needs them: a submission answered "check your phone"
// reads no catalogue.
func (p *Page) offer(c echo.Context, v *view, shop shops.Shop, w join.Wants) error {
	choices, err := p.join.Choices(c.Request().Context(), shop)
	if err != nil {
		return err
	}
	for _, sv := range choices.Services {
		v.Services = append(v.Services, choice{Value: sv, Label: sv, Checked: slices.Contains(w.Services, sv)})
	}
	for _, st := range choices.Staff {
		v.Staff = append(v.Staff, choice{Value: st.ID.String(), Label: st.Name, Checked: slices.Contains(w.Staff, st.ID.String())})
	}
	for d := 1; d <= 7; d++ {
		name := customers.DayName(d)
		v.Days = append(v.Days, choice{Value: name, Label: v.T["day_"+name], Checked: slices.Contains(w.Days, name)})
	}
	v.From, v.To, v.Clock = w.From, w.To, clock
	return nil
}

// pageLanguage is ?lang= when it names a supported language, else the shop's.
func pageLanguage(c echo.Context, shop shops.Shop) language.Code {
	if l, ok := language.Parse(c.QueryParam("lang")); ok {
		return l
	}
	return shop.Language.Or(language.Default)
}

func (p *Page) shop(c echo.Context) (shops.Shop, bool, error) {
	shop, err := p.shops.BySlug(c.Request().Context(), c.Param("slug"))
	if pe, ok := problem.As(err); ok && pe.Kind == problem.NotFound {
		return shops.Shop{}, false, nil
	}
	return shop, err == nil, err
}

func (p *Page) show(c echo.Context) error {
	shop, found, err := p.shop(c)
	if err != nil {
		return p.unavailable(c, "find shop", err)
	}
	if !found {
		return p.notFound(c)
	}
	lang := pageLanguage(c, shop)
	v := p.view(shop, lang, p.csrf(c))
	if err := p.offer(c, &v, shop, join.Wants{}); err != nil {
		return p.unavailable(c, "read choices", err)
	}
	return p.render(c, http.StatusOK, v)
}

func (p *Page) submit(c echo.Context) error {
	shop, found, err := p.shop(c)
	if err != nil {
		return p.unavailable(c, "find shop", err)
	}
	if !found {
		return p.notFound(c)
	}
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, MaxFormBytes)
	if err := req.ParseForm(); err != nil {
		return c.String(http.StatusRequestEntityTooLarge, "form too large")
	}
	form := req.PostForm
	lang, ok := language.Parse(form.Get("language"))
	if !ok {
		lang = pageLanguage(c, shop)
	}
	// Each list is cut just past what join accepts, which then refuses it.
	wants := join.Wants{Services: capped(form["services"], join.MaxWanted+1), Staff: capped(form["staff"], join.MaxWanted+1),
		Days: capped(form["days"], 8), From: bounded(form.Get("from"), 5), To: bounded(form.Get("to"), 5)}
	v := p.view(shop, lang, "")
	v.Name, v.Phone, v.Consent = bounded(form.Get("name"), 100), bounded(form.Get("phone"), 40), form.Get("consent") == "yes"
	if !p.validCSRF(c, form.Get("csrf")) {
		v.CSRF = p.csrf(c)
		v.FormError = v.T["error_form"]
		if err := p.offer(c, &v, shop, wants); err != nil {
			return p.unavailable(c, "read choices", err)
		}
		return p.render(c, http.StatusForbidden, v)
	}
	var ip netip.Addr
	if a, err := netip.ParseAddr(c.RealIP()); err == nil {
		ip = a
	}
	_, err = p.join.Request(req.Context(), shop, join.Submission{
		Name: form.Get("name"), Phone: form.Get("phone"), Language: lang, Consent: v.Consent,
		Honeypot: form.Get("website"), IP: ip, UserAgent: req.UserAgent(), Wants: wants,
	})
	var fe join.FieldErrors
	switch {
	case errors.As(err, &fe):
		v.CSRF = p.csrf(c)
		for field, id := range fe {
			v.Errors[field] = v.T[id]
		}
		if err := p.offer(c, &v, shop, wants); err != nil {
			return p.unavailable(c, "read choices", err)
		}
		return p.render(c, http.StatusUnprocessableEntity, v)
	case err != nil:
		return p.unavailable(c, "join request", err)
	}
	// Sent or refused, the visitor reads the same.
	v.Done = true
	return p.render(c, http.StatusOK, v)
}

// capped is at most n of vs, each cut to 100 bytes.
func capped(vs []string, n int) []string {
	out := make([]string, 0, min(len(vs), n))
	for _, v := range vs[:min(len(vs), n)] {
		out = append(out, bounded(v, 100))
	}
	return out
}

// bounded is s cut to at most n bytes, for showing back in the form.
func bounded(s string, n int) string {
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "")
	}
	return s
}

func (p *Page) render(c echo.Context, status int, v view) error {
	var b bytes.Buffer
	if err := v.node().Render(&b); err != nil {
		return err
	}
	return c.HTMLBlob(status, b.Bytes())
}

func (p *Page) notFound(c echo.Context) error {
	lang, ok := language.Parse(c.QueryParam("lang"))
	if !ok {
		lang = language.Default
	}
	v := view{Lang: string(lang), Title: join.Words(lang, "not_found"), NotFound: true,
		T: map[string]string{"not_found": join.Words(lang, "not_found")}, Base: "/join/" + "missing"}
	return p.render(c, http.StatusNotFound, v)
}

func (p *Page) unavailable(c echo.Context, what string, err error) error {
	l := p.cfg.Logger
	if rl, ok := c.Get(httperr.LoggerKey).(*slog.Logger); ok && rl != nil {
		l = rl
	}
	l.Error("join page "+what, "err", err)
	c.Response().Header().Set("Retry-After", "30")
	return c.String(http.StatusServiceUnavailable, "Please try again in a moment.")
}

// csrf returns the form's token, setting the cookie whose nonce it signs when the
// request brought none.
func (p *Page) csrf(c echo.Context) string {
	nonce := ""
	if ck, err := c.Cookie(csrfCookie); err == nil && len(ck.Value) == 43 {
		nonce = ck.Value
	}
	if nonce == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		nonce = base64.RawURLEncoding.EncodeToString(b)
		c.SetCookie(&http.Cookie{Name: csrfCookie, Value: nonce, Path: "/join/", MaxAge: int(csrfTTL / time.Second),
			Expires: p.cfg.Now().Add(csrfTTL), HttpOnly: true, Secure: p.cfg.Secure, SameSite: http.SameSiteLaxMode})
	}
	return p.token(nonce)
}

func (p *Page) token(nonce string) string {
	h := hmac.New(sha256.New, p.cfg.Secret)
	h.Write([]byte("join\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func (p *Page) validCSRF(c echo.Context, got string) bool {
	ck, err := c.Cookie(csrfCookie)
	if err != nil || got == "" {
		return false
	}
	return hmac.Equal([]byte(got), []byte(p.token(ck.Value)))
}
