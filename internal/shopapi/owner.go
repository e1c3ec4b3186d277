package shopapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// ImportPath is the CSV import's route. Its body may be far larger than the server's
// usual cap: the server gives this route a limit a little above MaxImportBytes (it
// limits bodies by matched route), and the handler caps it at MaxImportBytes itself, so
// the handler's answer is the one sent.
const ImportPath = "/api/customers/import"

// MaxImportBytes caps an import's body: MaxImportRows lines of a few hundred bytes.
const MaxImportBytes = 4 << 20

// optional is a JSON field that may be absent (Set false), null (Set, Null) or a value.
// A PATCH needs all three: absent keeps, null clears, a value replaces.
type optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// ptr is the value as a pointer when set and not null; a null for a field that cannot be
// cleared is an error naming it.
func ptr[T any](o optional[T], field string) (*T, error) {
	if !o.Set {
		return nil, nil
	}
	if o.Null {
		return nil, problem.Invalidf(field, "%s cannot be null", field)
	}
	return &o.Value, nil
}

// ---- the shop itself ----

type shopPatchRequest struct {
	Name        optional[string]        `json:"name"`
	Timezone    optional[string]        `json:"timezone"`
	Currency    optional[string]        `json:"currency"`
	PaymentMode optional[string]        `json:"payment_mode"`
	OfferPolicy optional[policyRequest] `json:"offer_policy"`
	// CalendarFullDetails puts full names and numbers in the calendar feed.
	CalendarFullDetails optional[bool] `json:"calendar_full_details"`
	// Language cannot be null: a shop always has one.
	Language optional[string] `json:"language"`
	// NotifyPhone null removes the owner's alert number.
	NotifyPhone optional[string] `json:"notify_phone"`
	// AutoDeclare cannot be null: a shop declares its appointments' openings or not.
	AutoDeclare optional[bool] `json:"auto_declare"`
	// Formality null goes back to the language's default.
	Formality optional[string] `json:"formality"`
	// GSM7 cannot be null: prefer or exact.
	GSM7 optional[string] `json:"gsm7"`
	// HelpContact null removes the shop's help contact.
	HelpContact optional[string] `json:"help_contact"`
	// Slug cannot be null: the join page always has a name.
	Slug optional[string] `json:"slug"`
	// PrivacyURL null or "" removes the privacy policy's link.
	PrivacyURL optional[string] `json:"privacy_url"`
	// MoveUpDays and ChainMax cannot be null: 0 turns each off.
	MoveUpDays optional[int] `json:"move_up_days"`
	ChainMax   optional[int] `json:"chain_max"`
	// CustomersCancelByText cannot be null.
	CustomersCancelByText optional[bool] `json:"customers_cancel_by_text"`
	// Ranking cannot be null; SkipAfterNoShows null is never.
	Ranking          optional[string] `json:"ranking"`
	SkipAfterNoShows optional[int]    `json:"skip_after_no_shows"`
	// JoinCountries replaces the calling codes besides the shop's own that may join
	// (null or []: the shop's own only).
	JoinCountries optional[[]string] `json:"join_countries"`
	// JoinKeywords replaces the shop's own join keywords (null or []: none).
	JoinKeywords optional[[]string] `json:"join_keywords"`
	protectionRequest
}

// protectionRequest is the no-show protection's fields (issue 48) of a shop's creation
// and of a PATCH alike: the deposits are nullable; the rest cannot be null (0 or ""
// turns a fee or the policy off).
type protectionRequest struct {
	DepositCents       optional[int64]  `json:"deposit_cents"`
	DepositPercent     optional[int]    `json:"deposit_percent"`
	KeepCard           optional[bool]   `json:"keep_card"`
	CancellationPolicy optional[string] `json:"cancellation_policy"`
	LateCancelHours    optional[int]    `json:"late_cancel_hours"`
	NoShowFeeCents     optional[int64]  `json:"no_show_fee_cents"`
	LateCancelFeeCents optional[int64]  `json:"late_cancel_fee_cents"`
}

// protection reads the no-show protection's fields into p.
func (r protectionRequest) protection(p *shops.ProtectionChange) (err error) {
	if d := r.DepositCents; d.Set {
		p.DepositCentsSet = true
		if !d.Null {
			v := d.Value
			p.DepositCents = &v
		}
	}
	if d := r.DepositPercent; d.Set {
		p.DepositPercentSet = true
		if !d.Null {
			v := d.Value
			p.DepositPercent = &v
		}
	}
	if p.KeepCard, err = ptr(r.KeepCard, "keep_card"); err != nil {
		return err
	}
	if p.Policy, err = ptr(r.CancellationPolicy, "cancellation_policy"); err != nil {
		return err
	}
	if p.LateCancelHours, err = ptr(r.LateCancelHours, "late_cancel_hours"); err != nil {
		return err
	}
	if p.NoShowFeeCents, err = ptr(r.NoShowFeeCents, "no_show_fee_cents"); err != nil {
		return err
	}
	p.LateCancelFeeCents, err = ptr(r.LateCancelFeeCents, "late_cancel_fee_cents")
	return err
}

func (r shopPatchRequest) change() (ch shops.ShopChange, err error) {
	if ch.Name, err = ptr(r.Name, "name"); err != nil {
		return ch, err
	}
	if ch.Timezone, err = ptr(r.Timezone, "timezone"); err != nil {
		return ch, err
	}
	if ch.Currency, err = ptr(r.Currency, "currency"); err != nil {
		return ch, err
	}
	if ch.PaymentMode, err = ptr(r.PaymentMode, "payment_mode"); err != nil {
		return ch, err
	}
	if ch.CalendarFullDetails, err = ptr(r.CalendarFullDetails, "calendar_full_details"); err != nil {
		return ch, err
	}
	if ch.AutoDeclare, err = ptr(r.AutoDeclare, "auto_declare"); err != nil {
		return ch, err
	}
	if ch.Slug, err = ptr(r.Slug, "slug"); err != nil {
		return ch, err
	}
	if u := r.PrivacyURL; u.Set {
		v := u.Value // null: "", no link
		ch.PrivacyURL = &v
	}
	if ch.MoveUpDays, err = ptr(r.MoveUpDays, "move_up_days"); err != nil {
		return ch, err
	}
	if ch.ChainMax, err = ptr(r.ChainMax, "chain_max"); err != nil {
		return ch, err
	}
	if ch.CustomersCancelByText, err = ptr(r.CustomersCancelByText, "customers_cancel_by_text"); err != nil {
		return ch, err
	}
	if r.Ranking.Set {
		v, err := ptr(r.Ranking, "ranking")
		if err != nil {
			return ch, err
		}
		rk := shops.Ranking(*v)
		ch.Ranking = &rk
	}
	if k := r.JoinKeywords; k.Set {
		words := append([]string{}, k.Value...) // null: none
		ch.JoinKeywords = &words
	}
	if n := r.SkipAfterNoShows; n.Set {
		ch.SkipAfterNoShowsSet = true
		if !n.Null {
			v := n.Value
			ch.SkipAfterNoShows = &v
		}
	}
	if p := r.NotifyPhone; p.Set && !p.Null && p.Value == "" {
		return ch, problem.Invalidf("notify_phone", "notify_phone must be in E.164 form, e.g. +15555550199, or null for no alerts")
	}
	if err := r.wording(&ch); err != nil {
		return ch, err
	}
	if err := r.protection(&ch.Protection); err != nil {
		return ch, err
	}
	if l := r.Language; l.Set {
		// A null's Value is "": refused as any other value that is not a code is, with
		// the codes listed (a shop always has a language).
		lang, err := shops.ParseLanguage(l.Value)
		if err != nil {
			return ch, err
		}
		ch.Language = &lang
	}
	if !r.OfferPolicy.Set {
		return ch, nil
	}
	if r.OfferPolicy.Null {
		return ch, problem.Invalidf("offer_policy", "offer_policy cannot be null")
	}
	ch.Policy, err = r.OfferPolicy.Value.fields(false)
	return ch, err
}

// wording reads the texts' wording settings of a PATCH into ch.
func (r shopPatchRequest) wording(ch *shops.ShopChange) error {
	if f := r.Formality; f.Set {
		v := shops.FormalityDefault
		if !f.Null {
			var err error
			if v, err = shops.ParseFormality(f.Value); err != nil {
				return err
			}
		}
		ch.Formality = &v
	}
	if g := r.GSM7; g.Set {
		// A null's Value is "": refused with the values listed.
		v, err := shops.ParseGSM7(g.Value)
		if err != nil {
			return err
		}
		ch.GSM7 = &v
	}
	if hc := r.HelpContact; hc.Set {
		v, err := helpContact(hc.Value, hc.Null)
		if err != nil {
			return err
		}
		ch.HelpContact = &v
	}
	return nil
}

// helpContact reads help_contact: null is none; an empty one is refused (null says
// none).
func helpContact(v string, null bool) (string, error) {
	if null {
		return "", nil
	}
	if strings.TrimSpace(v) == "" {
		return "", problem.Invalidf("help_contact", "help_contact must be a phone number, an e-mail or an address of at most 100 characters, or null")
	}
	return shops.CheckHelpContact(v)
}

func (h *Handlers) getShop(c echo.Context) error {
	// Read afresh, not the copy the key check loaded: the answer is the stored state.
	shop, err := h.Shops.Get(c.Request().Context(), shopOf(c).ID)
	if err != nil {
		return err
	}
	out, err := h.shopView(c.Request().Context(), shop)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) patchShop(c echo.Context) error {
	var req shopPatchRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	ch, err := req.change()
	if err != nil {
		return err
	}
	if p := req.NotifyPhone; p.Set && !p.Null {
		if err := shops.CheckNotifyPhone(shopOf(c), p.Value); err != nil {
			return err
		}
	}
	// The join page's countries are checked first and set once the shop's change is
	// made: a refusal of either changes neither.
	if jc := req.JoinCountries; jc.Set {
		if h.Join == nil {
			return errNoConsent
		}
		if _, err := join.CheckAllowedCountries(shopOf(c), jc.Value); err != nil {
			return err
		}
	}
	shop, err := h.Shops.Update(c.Request().Context(), shopOf(c).ID, ch)
	if err != nil {
		return err
	}
	if jc := req.JoinCountries; jc.Set {
		if _, err := h.Join.SetAllowedCountries(c.Request().Context(), shop, jc.Value); err != nil {
			return err
		}
	}
	if p := req.NotifyPhone; p.Set {
		if shop, err = h.changeNotifyPhone(c.Request().Context(), shop, p.Value); err != nil {
			return err
		}
	}
	out, err := h.shopView(c.Request().Context(), shop)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) rotateKey(c echo.Context) error {
	shop, key, err := h.Shops.RotateKey(c.Request().Context(), shopOf(c).ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	out := h.newShopJSON(shop)
	out.APIKey = key
	return c.JSON(http.StatusOK, out)
}

// rotateCalendarToken gives the shop a new calendar feed address; the old one is dead
// from this answer on, on every instance.
func (h *Handlers) rotateCalendarToken(c echo.Context) error {
	shop, err := h.Shops.RotateCalendarToken(c.Request().Context(), shopOf(c).ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusOK, h.newShopJSON(shop))
}

// ---- customers ----

func (h *Handlers) listCustomers(c echo.Context) error {
	q := customers.Query{Search: c.QueryParam("q"), Status: c.QueryParam("status"), Cursor: c.QueryParam("cursor")}
	n, err := queryLimit(c, customers.MaxCustomerPage)
	if err != nil {
		return err
	}
	q.Limit = n
	page, err := h.Customers.List(c.Request().Context(), shopOf(c).ID, q)
	if err != nil {
		return err
	}
	out := api.CustomerList{Customers: make([]api.Customer, 0, len(page.Customers))}
	ids := make([]uuid.UUID, 0, len(page.Customers))
	for _, cu := range page.Customers {
		out.Customers = append(out.Customers, cu.API())
		ids = append(ids, cu.ID)
	}
	// The page's stats in one statement.
	stats, err := h.Customers.StatsOf(c.Request().Context(), shopOf(c).ID, ids)
	if err != nil {
		return err
	}
	for i := range out.Customers {
		if st, ok := stats[out.Customers[i].ID]; ok {
			out.Customers[i].Stats = &st
		}
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return c.JSON(http.StatusOK, out)
}

// customerID reads the :id path parameter; a malformed one names no customer (404).
func customerID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, customers.ErrNotFound
	}
	return id, nil
}

func (h *Handlers) getCustomer(c echo.Context) error {
	id, err := customerID(c)
	if err != nil {
		return err
	}
	cu, err := h.Customers.Get(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return h.customerJSON(c, http.StatusOK, cu)
}

// customerJSON answers the customer with their stats, as every customer answer of the
// owners' API carries them.
func (h *Handlers) customerJSON(c echo.Context, status int, cu customers.Customer) error {
	out := cu.API()
	st, err := h.Customers.Stats(c.Request().Context(), cu.ShopID, cu.ID)
	if err != nil {
		return err
	}
	out.Stats = &st
	return c.JSON(status, out)
}

// reassignedChecked takes the "possibly reassigned" mark off a customer (their number
// answered "wrong number"; the owner checked it is still theirs) and answers the
// customer. Idempotent.
func (h *Handlers) reassignedChecked(c echo.Context) error {
	id, err := customerID(c)
	if err != nil {
		return err
	}
	cu, err := h.Customers.ClearPossiblyReassigned(c.Request().Context(), shopOf(c).ID, id)
	if err != nil {
		return err
	}
	return h.customerJSON(c, http.StatusOK, cu)
}

type customerPatchRequest struct {
	Name        optional[string]             `json:"name"`
	Priority    optional[int64]              `json:"priority"`
	SMSOptIn    optional[bool]               `json:"sms_opt_in"`
	Preferences optional[preferencesRequest] `json:"preferences"`
	// Language null puts the customer back in the shop's language.
	Language optional[string] `json:"language"`
	MoveUp   optional[bool]   `json:"move_up"`
}

type preferencesRequest struct {
	Days     []string     `json:"days"`
	Windows  []api.Window `json:"windows"`
	Services []string     `json:"services"`
	// StaffIDs are the only people whose openings the customer wants (empty: anyone).
	StaffIDs []uuid.UUID `json:"staff_ids"`
}

// preferences reads the JSON form; the domain checks the rest (counts, order, sizes).
func (p preferencesRequest) preferences() (customers.Preferences, error) {
	var out customers.Preferences
	if len(p.Days) > 7 || len(p.Windows) > customers.MaxWindows*4 || len(p.Services) > 100 || len(p.StaffIDs) > 100 {
		return out, problem.Invalidf("preferences", "preferences hold at most 7 days, %d windows and 20 services", customers.MaxWindows)
	}
	for _, d := range p.Days {
		n, ok := customers.ParseDay(d)
		if !ok {
			return out, problem.Invalidf("preferences.days", "days must be days of the week: mon, tue, wed, thu, fri, sat, sun")
		}
		out.Days = append(out.Days, n)
	}
	for _, w := range p.Windows {
		start, ok1 := shops.ParseClock(w.Start)
		end, ok2 := shops.ParseClock(w.End)
		if !ok1 || !ok2 {
			return out, problem.Invalidf("preferences.windows", `each window needs start and end as "HH:MM", e.g. {"start":"09:00","end":"12:00"}`)
		}
		out.Windows = append(out.Windows, customers.Window{Start: start, End: end})
	}
	out.Services = p.Services
	out.StaffIDs = p.StaffIDs
	return out, nil
}

func (h *Handlers) patchCustomer(c echo.Context) error {
	id, err := customerID(c)
	if err != nil {
		return err
	}
	var req customerPatchRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	var ch customers.Change
	if ch.Name, err = ptr(req.Name, "name"); err != nil {
		return err
	}
	if ch.SMSOptIn, err = ptr(req.SMSOptIn, "sms_opt_in"); err != nil {
		return err
	}
	if ch.MoveUp, err = ptr(req.MoveUp, "move_up"); err != nil {
		return err
	}
	if v, err := ptr(req.Priority, "priority"); err != nil {
		return err
	} else if v != nil {
		n := int(clamp(*v, 1<<20))
		ch.Priority = &n
	}
	if p := req.Preferences; p.Set {
		prefs := customers.Preferences{} // null clears them
		if !p.Null {
			if prefs, err = p.Value.preferences(); err != nil {
				return err
			}
		}
		ch.Preferences = &prefs
	}
	if l := req.Language; l.Set {
		var lang language.Code // null: the shop's
		if !l.Null {
			if lang, err = shops.ParseLanguage(l.Value); err != nil {
				return err
			}
		}
		ch.Language = &lang
	}
	cu, err := h.Customers.Update(c.Request().Context(), shopOf(c).ID, id, ch)
	if err != nil {
		return err
	}
	return h.customerJSON(c, http.StatusOK, cu)
}

func (h *Handlers) deleteCustomer(c echo.Context) error {
	id, err := customerID(c)
	if err != nil {
		return err
	}
	if err := h.Erasure.Erase(c.Request().Context(), shopOf(c).ID, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ---- the CSV import ----

// NewImportJSON is the JSON answer of an import, for the API (and its tests).
func newImportJSON(rep customers.ImportReport) api.CustomerImport {
	out := api.CustomerImport{Created: rep.Created, Updated: rep.Updated, Unchanged: rep.Unchanged, Rejected: rep.Rejected,
		Rows: make([]api.CustomerImportRow, 0, len(rep.Rows))}
	for _, r := range rep.Rows {
		row := api.CustomerImportRow{Line: r.Line, Phone: r.Phone, Result: r.Result, Reason: r.Reason}
		if r.CustomerID != uuid.Nil {
			id := r.CustomerID
			row.CustomerID = &id
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

var errNotCSVType = &httperr.Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
	Message: "send the file as text/csv, or as the part named file of a multipart/form-data upload"}

func (h *Handlers) importCustomers(c echo.Context) error {
	req := c.Request()
	body := http.MaxBytesReader(c.Response(), req.Body, MaxImportBytes)
	file, err := CSVBody(req.Header.Get(echo.HeaderContentType), body)
	if err != nil {
		return err
	}
	rep, err := h.Customers.Import(req.Context(), shopOf(c).ID, file, customers.Source{By: "api key (CSV import)"})
	if err != nil {
		if tooLarge(err) {
			return &httperr.Error{Status: http.StatusRequestEntityTooLarge, Code: "file_too_large",
				Message: "the file is larger than 4 MiB; split it"}
		}
		return err
	}
	return c.JSON(http.StatusOK, newImportJSON(rep))
}

// CSVBody returns the CSV file a request carries: the body itself (text/csv and kin) or
// the part named "file" of a multipart/form-data body, read as a stream (never spooled
// to memory or disk whole).
func CSVBody(contentType string, body io.Reader) (io.Reader, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, errNotCSVType
	}
	switch mt {
	case "text/csv", "application/csv", "text/plain", "application/vnd.ms-excel":
		return body, nil
	case "multipart/form-data":
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, httperr.BadRequestField("no_file", "file", "the upload has no part named file")
			}
			if err != nil {
				if tooLarge(err) {
					return nil, &httperr.Error{Status: http.StatusRequestEntityTooLarge, Code: "file_too_large",
						Message: "the file is larger than 4 MiB; split it"}
				}
				return nil, httperr.BadRequest("bad_multipart", "the multipart/form-data body could not be read")
			}
			if part.FormName() == "file" {
				return part, nil
			}
		}
	}
	return nil, errNotCSVType
}
