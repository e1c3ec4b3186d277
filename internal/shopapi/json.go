package shopapi

import (
	"cmp"
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

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/calendar"
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
	// Formality is absent or null for the language's default.
	Formality *string `json:"formality"`
	// GSM7 is absent or null for prefer.
	GSM7 *string `json:"gsm7"`
	// HelpContact is absent or null for none (HELP gives the SMS number).
	HelpContact *string `json:"help_contact"`
	// Slug is absent or null for one derived from the name.
	Slug *string `json:"slug"`
	// PrivacyURL is absent, null or "" for none.
	PrivacyURL *string `json:"privacy_url"`
	// The no-show protection, read and checked as a PATCH's: what is absent has its
	// default, a null deposit none, and a null for the rest is refused as a PATCH's is.
	protectionRequest
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
	if r.Formality != nil {
		if n.Formality, err = shops.ParseFormality(*r.Formality); err != nil {
			return n, err
		}
	}
	if r.GSM7 != nil {
		if n.GSM7, err = shops.ParseGSM7(*r.GSM7); err != nil {
			return n, err
		}
	}
	if r.HelpContact != nil {
		if n.HelpContact, err = helpContact(*r.HelpContact, false); err != nil {
			return n, err
		}
	}
	if r.Slug != nil {
		if *r.Slug == "" {
			return n, problem.Invalidf("slug", "slug must be 3 to 40 letters a-z, digits and single dashes, such as joes-barbers, or null for one made from the name")
		}
		n.Slug = *r.Slug
	}
	if r.PrivacyURL != nil {
		n.PrivacyURL = *r.PrivacyURL
	}
	if err := r.protection(&n.Protection); err != nil {
		return n, err
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
	// One clock reader for every "HH:MM" (shops.ParseClock); 24:00 ends a customer's
	// window, but quiet hours run from a time of day to another: 00:00 to 23:59.
	start, ok1 := shops.ParseClock(*q.Start)
	end, ok2 := shops.ParseClock(*q.End)
	if !ok1 || !ok2 || start == shops.EndOfDay || end == shops.EndOfDay {
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

func formatClock(minutes int) string {
	return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)
}

func (h *Handlers) newShopJSON(s shops.Shop) api.Shop {
	p := s.Policy
	out := api.Shop{
		ID: s.ID, Name: s.Name, Timezone: s.Timezone, SMSNumber: s.SMSNumber, Currency: s.Currency,
		PaymentMode: s.PaymentMode, CreatedAt: s.CreatedAt.UTC(),
		CalendarURL: calendar.URL(h.PublicURL, s.CalendarToken), CalendarFullDetails: s.CalendarFullDetails,
		Stripe: newStripeJSON(s), Language: string(s.Language), NotifyPhone: nonEmpty(s.NotifyPhone),
		AutoDeclare: s.AutoDeclare, Formality: nonEmpty(string(s.Formality)), GSM7: string(cmp.Or(s.GSM7, shops.GSM7Prefer)),
		HelpContact: nonEmpty(s.HelpContact),
		Slug:        s.Slug, JoinURL: joinURL(h.PublicURL, s.Slug), PrivacyURL: nonEmpty(s.PrivacyURL),
		MoveUpDays: s.MoveUpDays, ChainMax: s.ChainMax,
		CustomersCancelByText: s.CustomersCancelByText, Ranking: string(cmp.Or(s.Ranking, shops.RankingPriority)),
		SkipAfterNoShows: s.SkipAfterNoShows, JoinKeywords: append([]string{}, s.JoinKeywords...),
		OfferPolicy: api.OfferPolicy{
			WaveSize:              p.WaveSize,
			WaveIntervalSeconds:   int64(p.WaveInterval / time.Second),
			MinLeadMinutes:        int64(p.MinLead / time.Minute),
			CooldownSeconds:       int64(p.Cooldown / time.Second),
			FirstWaveDelaySeconds: int64(p.FirstWaveDelay / time.Second),
			SendRatePerSecond:     p.SendRate,
		},
	}
	pr := s.Protection
	out.DepositCents, out.DepositPercent, out.KeepCard = pr.DepositCents, pr.DepositPercent, pr.KeepCard
	out.CancellationPolicy, out.LateCancelHours, out.PolicyVersion = pr.Policy, pr.LateCancelHours, pr.PolicyVersion
	out.NoShowFeeCents, out.LateCancelFeeCents = pr.NoShowFeeCents, pr.LateCancelFeeCents
	if p.MaxOffersPerDay > 0 {
		n := p.MaxOffersPerDay
		out.OfferPolicy.MaxOffersPerDay = &n
	}
	if q := p.Quiet; q != nil {
		out.OfferPolicy.QuietHours = &api.QuietHours{Start: formatClock(q.Start), End: formatClock(q.End)}
	}
	return out
}

// joinURL is the address of the shop's join page (internal/join/page serves it).
func joinURL(publicURL, slug string) string {
	return strings.TrimRight(publicURL, "/") + "/join/" + slug
}

type customerRequest struct {
	Phone    string `json:"phone"`
	Name     string `json:"name"`
	SMSOptIn bool   `json:"sms_opt_in"`
	Priority int    `json:"priority"`
	// Language is absent or null for the shop's.
	Language *string `json:"language"`
	// Preferences are absent or null for any opening, as PATCH takes them.
	Preferences *preferencesRequest `json:"preferences"`
	// MoveUp: offer earlier times for their appointments (absent: false).
	MoveUp bool `json:"move_up"`
}

type openingRequest struct {
	// StartsAt is a string parsed here, so that a bad time is a 422 on starts_at
	// rather than a JSON error.
	StartsAt        *string `json:"starts_at"`
	DurationMinutes int     `json:"duration_minutes"`
	Service         string  `json:"service"`
	PriceCents      int64   `json:"price_cents"`
	// StaffID is the person whose freed time it is; absent or null: anyone's.
	StaffID *uuid.UUID `json:"staff_id"`
}

// newOpeningJSON is the opening as the API shows it (api.Opening).
func newOpeningJSON(o slots.Opening, currency string) api.Opening {
	out := api.Opening{
		ID: o.ID, ShopID: o.ShopID, StartsAt: o.StartsAt,
		DurationMinutes: o.DurationMinutes, Service: o.Service, PriceCents: o.PriceCents, Currency: currency,
		Status: o.Status, OffersSent: o.OffersSent, Generation: o.Generation, CreatedAt: o.CreatedAt,
		FilledAt: o.FilledAt, Warnings: o.Warnings,
	}
	if o.Source == slots.SourceAppointment {
		id := o.SourceID
		out.Source, out.AppointmentID = api.OpeningFromAppointment, &id
	}
	if c := o.Chain; c != nil {
		out.Chain = &api.Chain{ID: c.ID, Position: c.Position, MovedFrom: c.MovedFrom}
	}
	if f := o.FilledBy; f != nil {
		out.FilledBy = &api.Filler{CustomerID: f.CustomerID, Phone: f.Phone, Name: f.Name}
	}
	if b := o.Booking; b != nil {
		out.Booking = &api.Booking{
			ID: b.ID, Status: b.Status, AmountCents: b.AmountCents,
			PaymentURL: nonEmpty(b.PaymentURL), StripeCheckoutSessionID: nonEmpty(b.StripeCheckoutSessionID),
			ApplicationFeeCents: b.ApplicationFeeCents, Service: b.Service, DurationMinutes: b.DurationMinutes,
		}
	}
	if o.StaffID != uuid.Nil {
		out.Staff = &api.Staff{ID: o.StaffID, Name: o.StaffName}
	}
	if o.ParentID != uuid.Nil {
		p := o.ParentID
		out.ParentID = &p
	}
	return out.Normal()
}

// nonEmpty is nil for "": a booking without a payment link yet has a null one.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
