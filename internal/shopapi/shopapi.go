// Package shopapi is the shop owners' JSON API: creating shops and setting a shop's
// platform fee (with the admin token); and, with the shop's own key, reading and
// changing the shop's settings, rotating its key and its calendar feed's address, asking
// for a link to Stripe's onboarding of the shop's own account (STRIPE_CONNECT=on),
// adding, listing, importing (CSV), editing and erasing customers, declaring, listing,
// reading and cancelling openings, keeping the shop's appointment book
// (/api/appointments: recording, listing, reading and cancelling appointments), reading
// customers' consent record and exporting the shop's as CSV (/api/consent/export),
// reading
// and answering the owner's inbox
// (/api/conversations), and managing outbound webhook endpoints and their deliveries. The creating POSTs honour an Idempotency-Key. It also serves the public
// calendar feed (CalendarPath). Its answers are the api package's wire types, which the
// outbound events carry too (an event shows an object as GET does). The API is described by an OpenAPI 3.1
// document (api/openapi.json), served at /api/openapi.json. Handlers only translate:
// they check the bearer token, decode the body, make one call to the domain and encode
// the answer. Errors are returned to echo, whose error handler must be httperr.Handler,
// so every error has one shape.
//
// A shop's key only ever reaches that shop's rows: every domain call takes the shop id
// from the authenticated key, never from the request, so another shop's opening is simply
// not found (404).
package shopapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/idempotency"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/stats"
)

// Handlers serves the shop API.
type Handlers struct {
	Shops *shops.Service
	// Customers are the shops' customers; Erasure erases one at the owner's request.
	Customers *customers.Service
	Erasure   *erasure.Service
	Openings  *slots.Service
	// Hooks serves the webhook endpoints and their deliveries.
	Hooks *hooks.Service
	// Idempotency keeps the answers of the creating POSTs sent with an
	// Idempotency-Key; nil ignores the header.
	Idempotency *idempotency.Store
	// Calendar serves the calendar feeds (CalendarPath); nil answers them 404.
	Calendar *calendar.Service
	// PublicURL is the server's external base URL, for the calendar feed's address.
	PublicURL string
	// AdminToken is the bearer token that may create shops and set a shop's platform
	// fee. Empty means no one may.
	AdminToken string
	// Ledger onboards shops' connected Stripe accounts (STRIPE_CONNECT=on); nil answers
	// the onboarding as a server without Connect.
	Ledger *ledger.Service
	// StripeCalls limits each shop's requests that call Stripe (the onboarding link);
	// nil: no limit.
	StripeCalls StripeCalls
	// Inbox serves the owner's conversations (/api/conversations).
	Inbox *inbox.Service
	// Senders sets up shops' own senders and their A2P registration (senders.go); nil
	// answers those routes 503 and shows each shop's number alone.
	Senders *senders.Service
	// Catalog serves the shop's staff and services (/api/staff, /api/services).
	Catalog *catalog.Catalog
	// Book is the shops' appointment books (/api/appointments).
	Book *book.Service
	// Join keeps the consent record (/api/customers/{id}/consent, the CSV export); nil
	// answers those routes 503.
	Join *join.Service
	// Offers keeps the record of who was offered what, and why; nil answers those
	// routes 503.
	Offers *offers.Service
	// Stats are the shop's recovery figures (GET /api/stats); nil answers 503.
	Stats *stats.Service
	// Queue queues the texts the API sends itself (the alert number's code); nil
	// answers a change of notify_phone 503.
	Queue jobs.Inserter
}

// Register adds the shop API's routes to e. The routes are registered one by one (not
// as an echo group with middleware) so that an unknown path or a wrong method gets its
// 404 or 405 before, not after, the credentials are checked.
func (h *Handlers) Register(e *echo.Echo) {
	e.GET("/api/openapi.json", serveOpenAPI)
	e.POST("/api/shops", h.createShop, h.requireAdmin)
	e.PATCH("/api/shops/:id", h.adminPatchShop, h.requireAdmin)
	e.POST("/api/customers", h.addCustomer, h.requireShop, h.idempotent)
	e.GET("/api/customers", h.listCustomers, h.requireShop)
	e.POST(ImportPath, h.importCustomers, h.requireShop, h.idempotent)
	e.GET("/api/customers/:id", h.getCustomer, h.requireShop)
	e.PATCH("/api/customers/:id", h.patchCustomer, h.requireShop)
	e.DELETE("/api/customers/:id", h.deleteCustomer, h.requireShop)
	e.POST("/api/customers/:id/reassigned_checked", h.reassignedChecked, h.requireShop)
	e.GET("/api/customers/:id/consent", h.customerConsent, h.requireShop)
	e.GET("/api/customers/:id/offers", h.customerOffers, h.requireShop)
	e.GET("/api/customers/:id/stats", h.customerStats, h.requireShop)
	e.GET(StatsPath, h.getStats, h.requireShop)
	e.POST("/api/customers/:id/clear_no_shows", h.clearNoShows, h.requireShop)
	e.GET("/api/openings/:id/offers", h.openingOffers, h.requireShop)
	e.GET("/api/openings/:id/explain", h.explainOpening, h.requireShop)
	e.POST("/api/bookings/:id/attended", h.markAttendance(ledger.AttendanceAttended), h.requireShop)
	e.POST("/api/bookings/:id/no_show", h.markAttendance(ledger.AttendanceNoShow), h.requireShop)
	e.DELETE("/api/bookings/:id/attendance", h.markAttendance(ledger.AttendanceNone), h.requireShop)
	e.GET("/api/bookings/:id/protection", h.bookingProtection, h.requireShop)
	e.POST("/api/bookings/:id/late_cancel", h.lateCancel, h.requireShop)
	e.GET(ConsentExportPath, h.exportConsent, h.requireShop)
	e.GET("/api/shop", h.getShop, h.requireShop)
	e.PATCH("/api/shop", h.patchShop, h.requireShop)
	e.POST(NotifyPhoneConfirmPath, h.confirmNotifyPhone, h.requireShop)
	e.POST("/api/shop/rotate-key", h.rotateKey, h.requireShop)
	e.POST("/api/shop/rotate-calendar-token", h.rotateCalendarToken, h.requireShop)
	e.POST(StripeOnboardingPath, h.stripeOnboarding, h.requireShop)
	e.POST("/api/openings", h.declareOpening, h.requireShop, h.idempotent)
	e.GET("/api/openings", h.listOpenings, h.requireShop)
	e.GET("/api/openings/:id", h.getOpening, h.requireShop)
	e.POST("/api/openings/:id/cancel", h.cancelOpening, h.requireShop)
	e.GET("/api/conversations", h.listConversations, h.requireShop)
	e.GET("/api/conversations/:id", h.getConversation, h.requireShop)
	e.PATCH("/api/conversations/:id", h.patchConversation, h.requireShop)
	e.POST("/api/conversations/:id/messages", h.replyConversation, h.requireShop, h.idempotent)
	e.POST("/api/conversations/:id/read", h.readConversation, h.requireShop)
	e.POST("/api/webhook_endpoints", h.createWebhookEndpoint, h.requireShop, h.idempotent)
	e.GET("/api/webhook_endpoints", h.listWebhookEndpoints, h.requireShop)
	e.GET("/api/webhook_endpoints/:id", h.getWebhookEndpoint, h.requireShop)
	e.PATCH("/api/webhook_endpoints/:id", h.patchWebhookEndpoint, h.requireShop)
	e.DELETE("/api/webhook_endpoints/:id", h.deleteWebhookEndpoint, h.requireShop)
	e.POST("/api/webhook_endpoints/:id/rotate_secret", h.rotateWebhookSecret, h.requireShop)
	e.GET("/api/webhook_endpoints/:id/deliveries", h.listWebhookDeliveries, h.requireShop)
	e.GET("/api/webhook_endpoints/:id/deliveries/:delivery_id", h.getWebhookDelivery, h.requireShop)
	e.POST("/api/webhook_endpoints/:id/deliveries/:delivery_id/retry", h.retryWebhookDelivery, h.requireShop)
	// Public: the token in the path is the credential (see calendarFeed).
	e.GET(CalendarPath, h.calendarFeed)
	e.HEAD(CalendarPath, h.calendarFeed)
	h.registerSenders(e)
	h.registerCatalog(e)
	h.registerAppointments(e)
	h.registerConnectors(e)
}

// errAdminUnauthorized answers a missing or wrong admin token.
var errAdminUnauthorized = problem.New(problem.Unauthorized, "unauthorized", "a valid admin token is required")

const shopKey = "shopapi.shop"

// requireAdmin lets the request through only with the admin token.
func (h *Handlers) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token, ok := bearer(c.Request())
		if !ok || h.AdminToken == "" || !equalSecret(token, h.AdminToken) {
			return errAdminUnauthorized
		}
		return next(c)
	}
}

// requireShop finds the shop whose key the request carries and keeps it in c.
func (h *Handlers) requireShop(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key, ok := bearer(c.Request())
		if !ok {
			return shops.ErrUnauthorized
		}
		shop, err := h.Shops.Authenticate(c.Request().Context(), key)
		if err != nil {
			return err
		}
		c.Set(shopKey, shop)
		return next(c)
	}
}

func shopOf(c echo.Context) shops.Shop {
	// requireShop runs before every handler that calls this; a missing shop is a
	// wiring bug, and the zero shop id finds nothing.
	s, _ := c.Get(shopKey).(shops.Shop)
	return s
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get(echo.HeaderAuthorization)), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// equalSecret compares in constant time; hashing first keeps the length of the secret
// out of the timing too.
func equalSecret(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

func (h *Handlers) createShop(c echo.Context) error {
	var req shopRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	n, err := req.newShop()
	if err != nil {
		return err
	}
	// An alert number given at creation waits for its code like one set later.
	notify := n.NotifyPhone
	if notify != "" {
		if err := shops.CheckNotifyPhone(shops.Shop{SMSNumber: n.SMSNumber}, notify); err != nil {
			return err
		}
		if h.Queue == nil {
			return ErrNoCodeSender
		}
	}
	n.NotifyPhone = ""
	shop, key, err := h.Shops.Create(c.Request().Context(), n)
	if err != nil {
		return err
	}
	var pending *api.NotifyPhonePending
	if notify != "" {
		if _, err := h.changeNotifyPhone(c.Request().Context(), shop, notify); err != nil {
			return err
		}
		if pending, err = h.notifyPhonePending(c.Request().Context(), shop); err != nil {
			return err
		}
	}
	// The key is in this answer and nowhere else: keep it out of caches.
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	out := h.newShopJSON(shop)
	out.APIKey = key
	out.NotifyPhonePending = pending
	return c.JSON(http.StatusCreated, out)
}

func (h *Handlers) addCustomer(c echo.Context) error {
	var req customerRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	n := customers.NewCustomer{Phone: req.Phone, Name: req.Name, SMSOptIn: req.SMSOptIn, Priority: req.Priority, MoveUp: req.MoveUp}
	if req.Language != nil {
		lang, err := shops.ParseLanguage(*req.Language)
		if err != nil {
			return err
		}
		n.Language = lang
	}
	if req.Preferences != nil {
		prefs, err := req.Preferences.preferences()
		if err != nil {
			return err
		}
		n.Preferences = prefs
	}
	cust, err := h.Customers.Add(c.Request().Context(), shopOf(c).ID, n)
	if err != nil {
		return err
	}
	return h.customerJSON(c, http.StatusCreated, cust)
}

func (h *Handlers) declareOpening(c echo.Context) error {
	var req openingRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	var startsAt time.Time
	if req.StartsAt != nil && *req.StartsAt != "" {
		t, err := time.Parse(time.RFC3339, *req.StartsAt)
		if err != nil {
			return problem.Invalidf("starts_at", "starts_at must be an RFC 3339 time such as 2026-11-22T15:00:00Z")
		}
		startsAt = t
	}
	shop := shopOf(c)
	if h.Senders != nil {
		// SMS_US_A2P=required: a US number whose campaign is not verified cannot text.
		if err := h.Senders.CheckCanText(c.Request().Context(), shop); err != nil {
			return err
		}
	}
	n := slots.NewOpening{
		StartsAt: startsAt, DurationMinutes: req.DurationMinutes, Service: req.Service, PriceCents: req.PriceCents,
	}
	if req.StaffID != nil {
		n.StaffID = *req.StaffID
	}
	o, err := h.Openings.Declare(c.Request().Context(), shop, n)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/openings/"+o.ID.String())
	return c.JSON(http.StatusCreated, newOpeningJSON(o, shop.Currency))
}

// maxList is the most openings one list answer holds.
const maxList = 500

// queryLimit reads a list's ?limit= (1 to max), or 0 when it is absent: the domain's
// default page.
func queryLimit(c echo.Context, max int) (int, error) {
	s := c.QueryParam("limit")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max {
		return 0, problem.Invalidf("limit", "limit must be a whole number from 1 to %d", max)
	}
	return n, nil
}

func (h *Handlers) listOpenings(c echo.Context) error {
	limit, err := queryLimit(c, maxList) // 0: the domain's default, which is maxList
	if err != nil {
		return err
	}
	shop := shopOf(c)
	list, err := h.Openings.List(c.Request().Context(), shop.ID, c.QueryParam("status"), limit)
	if err != nil {
		return err
	}
	out := api.OpeningList{Openings: make([]api.Opening, 0, len(list))}
	for _, o := range list {
		out.Openings = append(out.Openings, newOpeningJSON(o, shop.Currency))
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) getOpening(c echo.Context) error {
	id, err := openingID(c)
	if err != nil {
		return err
	}
	shop := shopOf(c)
	o, err := h.Openings.Get(c.Request().Context(), shop.ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newOpeningJSON(o, shop.Currency))
}

func (h *Handlers) cancelOpening(c echo.Context) error {
	id, err := openingID(c)
	if err != nil {
		return err
	}
	shop := shopOf(c)
	o, err := h.Openings.Cancel(c.Request().Context(), shop.ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newOpeningJSON(o, shop.Currency))
}

// openingID reads the :id path parameter; a malformed one names no opening, so it is a
// 404 like any other unknown id.
func openingID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, slots.ErrNotFound
	}
	return id, nil
}

// serveOpenAPI answers the API's OpenAPI document; it needs no credentials.
func serveOpenAPI(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=300")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, api.OpenAPI)
}
