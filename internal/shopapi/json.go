package shopapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// decode reads the body as one JSON object into v. Unknown fields are ignored (clients
// may send more than we read), but a value of the wrong type is a 400 naming the field,
// rather than a silent zero.
func decode(c echo.Context, v any) error {
	dec := json.NewDecoder(c.Request().Body)
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	// One object and nothing after it: a second value means a confused client.
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		if tooLarge(err) {
			return echo.ErrStatusRequestEntityTooLarge
		}
		return httperr.BadRequest("bad_json", "the request body must be a single JSON object")
	}
	return nil
}

func decodeError(err error) error {
	if tooLarge(err) {
		return echo.ErrStatusRequestEntityTooLarge
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		return httperr.BadRequest("bad_json", "the request body must be a JSON object")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return httperr.BadRequest("bad_json", "the request body must be a JSON object")
		}
		return httperr.BadRequestField("bad_json", typeErr.Field,
			fmt.Sprintf("%s must be %s (got %s)", typeErr.Field, jsonKind(typeErr.Type), jsonValue(typeErr.Value)))
	case errors.As(err, &syntaxErr):
		return httperr.BadRequest("bad_json", fmt.Sprintf("the request body is not valid JSON (at byte %d)", syntaxErr.Offset))
	default:
		// io.ErrUnexpectedEOF, a broken connection: nothing of it is worth echoing back.
		return httperr.BadRequest("bad_json", "the request body is not valid JSON")
	}
}

// tooLarge reports whether reading the body stopped at the BodyLimit middleware's cap.
func tooLarge(err error) bool {
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
		return true
	}
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// jsonKind names, in JSON's words, what a Go type accepts.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// jsonValue describes the offending value from json.UnmarshalTypeError.Value ("string",
// "number 12.5", "bool", ...).
func jsonValue(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return strings.TrimPrefix(v, "number ")
	case v == "number":
		return "a number out of range"
	case v == "bool":
		return "a boolean"
	case v == "array", v == "object":
		return "an " + v
	case v == "":
		return "something else"
	}
	return "a " + v
}

type shopRequest struct {
	Name        string         `json:"name"`
	Timezone    string         `json:"timezone"`
	SMSNumber   string         `json:"sms_number"`
	Currency    string         `json:"currency"`
	PaymentMode string         `json:"payment_mode"`
	OfferPolicy *policyRequest `json:"offer_policy"`
	// Language is absent or null for the default (en).
	Language *string `json:"language"`
	// NotifyPhone is absent or null for no alerts.
	NotifyPhone *string `json:"notify_phone"`
}

type quietHoursValue struct {
	Start *string `json:"start"`
	End   *string `json:"end"`
}

// newShop reads the creation request. The policy's fields go to the domain as given
// (shops.PolicyFields), which applies them by the rule a PATCH's follow: only an absent
// or null field takes its default, and an explicit 0 wave size, interval or send rate is
// refused, not defaulted (policyRequest).
func (r shopRequest) newShop() (n shops.NewShop, err error) {
	n = shops.NewShop{
		Name: r.Name, Timezone: r.Timezone, SMSNumber: r.SMSNumber, Currency: r.Currency, PaymentMode: r.PaymentMode,
	}
	if r.NotifyPhone != nil {
		if *r.NotifyPhone == "" {
			return n, problem.Invalidf("notify_phone", "notify_phone must be in E.164 form, e.g. +15555550199, or null for no alerts")
		}
		n.NotifyPhone = *r.NotifyPhone
	}
	if r.Language != nil {
		if n.Language, err = shops.ParseLanguage(*r.Language); err != nil {
			return n, err
		}
	}
	if r.OfferPolicy != nil {
		n.Policy, err = r.OfferPolicy.fields(true)
	}
	return n, err
}

func (q quietHoursValue) parse() (*shops.QuietHours, error) {
	const msg = `quiet_hours needs start and end as "HH:MM" (24-hour clock), e.g. {"start":"21:00","end":"08:00"}, or null`
	if q.Start == nil || q.End == nil {
		return nil, problem.Invalidf("offer_policy.quiet_hours", msg)
	}
	start, ok1 := parseClock(*q.Start)
	end, ok2 := parseClock(*q.End)
	if !ok1 || !ok2 {
		return nil, problem.Invalidf("offer_policy.quiet_hours", msg)
	}
	return &shops.QuietHours{Start: start, End: end}, nil
}

// dailyCap reads max_offers_per_day: a number from 1 (0 would read as "no cap" in the
// domain, so it is refused here rather than silently meaning the opposite).
func dailyCap(v int64) (int, error) {
	if v < 1 || v > 1000 {
		return 0, problem.Invalidf("offer_policy.max_offers_per_day", "max_offers_per_day must be between 1 and 1000, or null for no cap")
	}
	return int(v), nil
}

// clamp bounds v to ±limit, far outside every valid range, so that converting a huge
// number to a time.Duration cannot overflow into a valid-looking value.
func clamp(v, limit int64) int64 {
	return max(-limit, min(v, limit))
}

// parseClock reads "HH:MM" (exactly, 00:00 to 23:59) as minutes after midnight.
func parseClock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	digits := []byte{s[0], s[1], s[3], s[4]}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return 0, false
		}
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, false
	}
	return h*60 + m, true
}

func formatClock(minutes int) string {
	return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)
}

type shopJSON struct {
	ID          uuid.UUID  `json:"id"`
	Name        string     `json:"name"`
	Timezone    string     `json:"timezone"`
	SMSNumber   string     `json:"sms_number"`
	Currency    string     `json:"currency"`
	PaymentMode string     `json:"payment_mode"`
	OfferPolicy policyJSON `json:"offer_policy"`
	APIKey      string     `json:"api_key,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	// CalendarURL is the shop's secret calendar feed address.
	CalendarURL         string `json:"calendar_url"`
	CalendarFullDetails bool   `json:"calendar_full_details"`
	// Stripe is the shop's own Stripe account (STRIPE_CONNECT=on).
	Stripe stripeJSON `json:"stripe"`
	// Language is what its customers are texted in, unless theirs is set.
	Language string `json:"language"`
	// NotifyPhone is texted when a text waits in the owner's inbox; null for none.
	NotifyPhone *string `json:"notify_phone"`
	// SMSSender is the shop's sender and its A2P registration (senders.go); in
	// GET /api/shop and the admin's answers.
	SMSSender *senderJSON `json:"sms_sender,omitempty"`
}

type policyJSON struct {
	WaveSize            int             `json:"wave_size"`
	WaveIntervalSeconds int64           `json:"wave_interval_seconds"`
	MinLeadMinutes      int64           `json:"min_lead_minutes"`
	QuietHours          *quietHoursJSON `json:"quiet_hours"`
	CooldownSeconds     int64           `json:"cooldown_seconds"`
	// MaxOffersPerDay is null when there is no cap.
	MaxOffersPerDay       *int  `json:"max_offers_per_day"`
	FirstWaveDelaySeconds int64 `json:"first_wave_delay_seconds"`
	SendRatePerSecond     int   `json:"send_rate_per_second"`
}

type quietHoursJSON struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

func (h *Handlers) newShopJSON(s shops.Shop) shopJSON {
	p := s.Policy
	out := shopJSON{
		ID: s.ID, Name: s.Name, Timezone: s.Timezone, SMSNumber: s.SMSNumber, Currency: s.Currency,
		PaymentMode: s.PaymentMode, CreatedAt: s.CreatedAt.UTC(),
		CalendarURL: calendar.URL(h.PublicURL, s.CalendarToken), CalendarFullDetails: s.CalendarFullDetails,
		Stripe: newStripeJSON(s), Language: string(s.Language), NotifyPhone: nonEmpty(s.NotifyPhone),
		OfferPolicy: policyJSON{
			WaveSize:              p.WaveSize,
			WaveIntervalSeconds:   int64(p.WaveInterval / time.Second),
			MinLeadMinutes:        int64(p.MinLead / time.Minute),
			CooldownSeconds:       int64(p.Cooldown / time.Second),
			FirstWaveDelaySeconds: int64(p.FirstWaveDelay / time.Second),
			SendRatePerSecond:     p.SendRate,
		},
	}
	if p.MaxOffersPerDay > 0 {
		n := p.MaxOffersPerDay
		out.OfferPolicy.MaxOffersPerDay = &n
	}
	if q := p.Quiet; q != nil {
		out.OfferPolicy.QuietHours = &quietHoursJSON{Start: formatClock(q.Start), End: formatClock(q.End)}
	}
	return out
}

type customerRequest struct {
	Phone    string `json:"phone"`
	Name     string `json:"name"`
	SMSOptIn bool   `json:"sms_opt_in"`
	Priority int    `json:"priority"`
	// Language is absent or null for the shop's.
	Language *string `json:"language"`
}

type customerJSON struct {
	ID        uuid.UUID `json:"id"`
	Phone     string    `json:"phone"`
	Name      string    `json:"name"`
	SMSOptIn  bool      `json:"sms_opt_in"`
	Priority  int       `json:"priority"`
	OptedOut  bool      `json:"opted_out"`
	CreatedAt time.Time `json:"created_at"`
	// Status is opted_in, not_opted_in, opted_out (replied STOP) or unreachable.
	Status      string          `json:"status"`
	OptedOutAt  *time.Time      `json:"opted_out_at"`
	Preferences preferencesJSON `json:"preferences"`
	// Language is the customer's own, null when they are texted in the shop's.
	Language *string `json:"language"`
}

// preferencesJSON is a customer's preferences; empty lists mean "any".
type preferencesJSON struct {
	Days     []string     `json:"days"`
	Windows  []windowJSON `json:"windows"`
	Services []string     `json:"services"`
}

type windowJSON struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

func newCustomerJSON(c customers.Customer) customerJSON {
	out := customerJSON{
		ID: c.ID, Phone: c.Phone, Name: c.Name, SMSOptIn: c.SMSOptIn, Priority: c.Priority,
		OptedOut: c.OptedOutAt != nil, CreatedAt: c.CreatedAt.UTC(), Status: c.Status(),
		Preferences: preferencesJSON{Days: []string{}, Windows: []windowJSON{}, Services: []string{}},
	}
	if c.OptedOutAt != nil {
		t := c.OptedOutAt.UTC()
		out.OptedOutAt = &t
	}
	if c.Language != "" {
		l := string(c.Language)
		out.Language = &l
	}
	for _, d := range c.Preferences.Days {
		out.Preferences.Days = append(out.Preferences.Days, customers.DayName(d))
	}
	for _, w := range c.Preferences.Windows {
		out.Preferences.Windows = append(out.Preferences.Windows, windowJSON{Start: shops.FormatClock(w.Start), End: shops.FormatClock(w.End)})
	}
	out.Preferences.Services = append(out.Preferences.Services, c.Preferences.Services...)
	return out
}

type openingRequest struct {
	// StartsAt is a string parsed here, so that a bad time is a 422 on starts_at
	// rather than a JSON error.
	StartsAt        *string `json:"starts_at"`
	DurationMinutes int     `json:"duration_minutes"`
	Service         string  `json:"service"`
	PriceCents      int64   `json:"price_cents"`
}

// openingJSON is the public shape of an opening (docs/api.md). Fields may be added,
// never renamed or removed.
type openingJSON struct {
	ID              uuid.UUID    `json:"id"`
	ShopID          uuid.UUID    `json:"shop_id"`
	StartsAt        string       `json:"starts_at"`
	DurationMinutes int          `json:"duration_minutes"`
	Service         string       `json:"service"`
	PriceCents      int64        `json:"price_cents"`
	Currency        string       `json:"currency"`
	Status          string       `json:"status"`
	OffersSent      int          `json:"offers_sent"`
	FilledBy        *fillerJSON  `json:"filled_by"`
	Booking         *bookingJSON `json:"booking"`
	Generation      int          `json:"generation"`
	CreatedAt       time.Time    `json:"created_at"`
	FilledAt        *time.Time   `json:"filled_at"`
	// Warnings, in the answer to a declaration only, say what the owner should know of
	// an opening accepted anyway (a first wave the number cannot send in time).
	Warnings []string `json:"warnings,omitempty"`
}

type fillerJSON struct {
	CustomerID uuid.UUID `json:"customer_id"`
	Phone      string    `json:"phone"`
	Name       string    `json:"name"`
}

type bookingJSON struct {
	ID                      uuid.UUID `json:"id"`
	Status                  string    `json:"status"`
	AmountCents             int64     `json:"amount_cents"`
	PaymentURL              *string   `json:"payment_url"`
	StripeCheckoutSessionID *string   `json:"stripe_checkout_session_id"`
	// ApplicationFeeCents is the platform's fee on the payment (Stripe Connect; 0
	// without), and NetCents what the shop receives: AmountCents less the fee.
	ApplicationFeeCents int64 `json:"application_fee_cents"`
	NetCents            int64 `json:"net_cents"`
}

type listJSON struct {
	Openings []openingJSON `json:"openings"`
}

func newOpeningJSON(o slots.Opening, currency string) openingJSON {
	out := openingJSON{
		ID: o.ID, ShopID: o.ShopID, StartsAt: o.StartsAt.UTC().Format(time.RFC3339),
		DurationMinutes: o.DurationMinutes, Service: o.Service, PriceCents: o.PriceCents, Currency: currency,
		Status: o.Status, OffersSent: o.OffersSent, Generation: o.Generation, CreatedAt: o.CreatedAt.UTC(),
		Warnings: o.Warnings,
	}
	if o.FilledAt != nil {
		t := o.FilledAt.UTC()
		out.FilledAt = &t
	}
	if f := o.FilledBy; f != nil {
		out.FilledBy = &fillerJSON{CustomerID: f.CustomerID, Phone: f.Phone, Name: f.Name}
	}
	if b := o.Booking; b != nil {
		out.Booking = &bookingJSON{
			ID: b.ID, Status: b.Status, AmountCents: b.AmountCents,
			PaymentURL: nonEmpty(b.PaymentURL), StripeCheckoutSessionID: nonEmpty(b.StripeCheckoutSessionID),
			ApplicationFeeCents: b.ApplicationFeeCents, NetCents: b.AmountCents - b.ApplicationFeeCents,
		}
	}
	return out
}

// nonEmpty is nil for "": a booking without a payment link yet has a null one.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
