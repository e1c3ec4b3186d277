package customers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/cursor"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Customer statuses, as owners filter and read them.
const (
	StatusOptedIn     = "opted_in"     // texted when an opening suits them
	StatusNotOptedIn  = "not_opted_in" // no consent recorded: never texted
	StatusOptedOut    = "opted_out"    // replied STOP: only their START opts them back in
	StatusUnreachable = "unreachable"  // texts to the number fail for good
)

// ErrNotFound means the shop has no such (live) customer.
var ErrNotFound = problem.New(problem.NotFound, "customer_not_found", "no such customer")

// ErrOptedOut refuses an owner's attempt to opt back in a customer who replied STOP:
// only the customer's own START may do that.
var ErrOptedOut = &problem.Error{Kind: problem.Conflict, Code: "customer_opted_out", Field: "sms_opt_in",
	Message: "this customer replied STOP; only their own START can opt them back in"}

// MaxWindows is how many time windows a customer's preferences may hold.
const MaxWindows = 4

// maxServices is how many services a customer's preferences may name.
const maxServices = 20

// Window is a daily time window in the shop's time zone, in minutes after local
// midnight: Start inclusive, End exclusive (End may be 1440, midnight).
type Window struct {
	Start int
	End   int
}

// Preferences say which openings a customer wants to hear about. An empty field means
// "any": a customer with no preferences is offered everything.
type Preferences struct {
	// Days are ISO days of the week: 1 is Monday, 7 is Sunday.
	Days []int
	// Windows are times of day; an opening suits one when the whole appointment fits
	// (in a shop with services: the service they are offered, from the opening's start).
	Windows []Window
	// Services are the services they want, compared without regard to case, in the
	// order they want them (a shop with services offers the first that fits).
	Services []string
	// StaffIDs are the only people whose openings they want (internal/catalog).
	StaffIDs []uuid.UUID
}

// IsZero reports whether there are no preferences.
func (p Preferences) IsZero() bool {
	return len(p.Days) == 0 && len(p.Windows) == 0 && len(p.Services) == 0 && len(p.StaffIDs) == 0
}

// Contains reports whether an opening of service starting at start (in the shop's
// location loc) and lasting duration suits these preferences. The wave's query applies
// the same rule in SQL; this is its reference.
func (p Preferences) Contains(start time.Time, duration time.Duration, service string, loc *time.Location) bool {
	local := start.In(loc)
	if len(p.Days) > 0 && !slices.Contains(p.Days, ISODay(local.Weekday())) {
		return false
	}
	m := local.Hour()*60 + local.Minute()
	end := m + int(duration/time.Minute)
	if len(p.Windows) > 0 && !slices.ContainsFunc(p.Windows, func(w Window) bool { return w.Start <= m && end <= w.End }) {
		return false
	}
	if len(p.Services) > 0 && !slices.ContainsFunc(p.Services, func(s string) bool { return strings.EqualFold(s, service) }) {
		return false
	}
	return true
}

// ISODay is d as an ISO day number, 1 (Monday) to 7 (Sunday).
func ISODay(d time.Weekday) int {
	if d == time.Sunday {
		return 7
	}
	return int(d)
}

var dayNames = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// DayName is the three-letter name of an ISO day ("mon" for 1).
func DayName(d int) string {
	if d < 1 || d > 7 {
		return ""
	}
	return dayNames[d-1]
}

// ParseDay reads a day of the week: "mon", "Monday", "MON".
func ParseDay(s string) (int, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) < 3 {
		return 0, false
	}
	for i, n := range dayNames {
		full := []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}[i]
		if s == n || s == full || (len(s) >= 3 && strings.HasPrefix(full, s)) {
			return i + 1, true
		}
	}
	return 0, false
}

// normalise checks the preferences and puts them in a canonical order (days and
// windows sorted, services deduplicated), so that equal preferences compare equal.
func (p *Preferences) normalise() error {
	days := slices.Clone(p.Days)
	slices.Sort(days)
	days = slices.Compact(days)
	for _, d := range days {
		if d < 1 || d > 7 {
			return problem.Invalidf("preferences.days", "days must be days of the week: mon, tue, wed, thu, fri, sat, sun")
		}
	}
	if len(p.Windows) > MaxWindows {
		return problem.Invalidf("preferences.windows", "at most %d time windows", MaxWindows)
	}
	windows := slices.Clone(p.Windows)
	for _, w := range windows {
		if w.Start < 0 || w.End > 1440 || w.Start >= w.End {
			return problem.Invalidf("preferences.windows", `each window needs a start before its end, "HH:MM" from 00:00 to 24:00 (a window cannot span midnight: use two)`)
		}
	}
	slices.SortFunc(windows, func(a, b Window) int { return a.Start*2000 + a.End - (b.Start*2000 + b.End) })
	windows = slices.Compact(windows)
	var services []string
	for _, s := range p.Services {
		s = strings.TrimSpace(s)
		if s == "" || len(s) > 100 {
			return problem.Invalidf("preferences.services", "each service must be 1 to 100 characters")
		}
		if !slices.ContainsFunc(services, func(x string) bool { return strings.EqualFold(x, s) }) {
			services = append(services, s)
		}
	}
	if len(services) > maxServices {
		return problem.Invalidf("preferences.services", "at most %d services", maxServices)
	}
	var staff []uuid.UUID
	for _, id := range p.StaffIDs {
		if !slices.Contains(staff, id) {
			staff = append(staff, id)
		}
	}
	*p = Preferences{Days: days, Windows: windows, Services: services, StaffIDs: staff}
	return nil
}

// checkCatalog refuses preferences that name people who are not the shop's, or, once
// the shop has services, services it does not have.
func (p Preferences) checkCatalog(ctx context.Context, q db.DBTX, shopID uuid.UUID) error {
	if err := catalog.CheckStaff(ctx, q, shopID, "preferences.staff_ids", p.StaffIDs); err != nil {
		return err
	}
	if len(p.Services) == 0 {
		return nil
	}
	has, err := catalog.HasServices(ctx, q, shopID)
	if err != nil || !has {
		return err
	}
	unknown, err := catalog.UnknownServices(ctx, q, shopID, p.Services)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return &problem.Error{Kind: problem.Invalid, Code: "unknown_service", Field: "preferences.services",
			Message: fmt.Sprintf("the shop has no service named %q", unknown[0])}
	}
	return nil
}

// columns are the preferences as the customers table stores them.
func (p Preferences) columns() (days []int16, starts, ends []int32, services []string, staff []uuid.UUID) {
	days, starts, ends, services, staff = []int16{}, []int32{}, []int32{}, []string{}, []uuid.UUID{}
	staff = append(staff, p.StaffIDs...)
	for _, d := range p.Days {
		days = append(days, int16(d))
	}
	for _, w := range p.Windows {
		starts, ends = append(starts, int32(w.Start)), append(ends, int32(w.End))
	}
	services = append(services, p.Services...)
	return days, starts, ends, services, staff
}

// Status is the customer's standing for texts: opted_out, unreachable, opted_in or
// not_opted_in (in that order of precedence).
func (c Customer) Status() string {
	switch {
	case c.OptedOutAt != nil:
		return StatusOptedOut
	case c.UnreachableAt != nil:
		return StatusUnreachable
	case c.SMSOptIn:
		return StatusOptedIn
	}
	return StatusNotOptedIn
}

// Get returns shopID's customer id; another shop's or an erased one is not found.
func (s *Service) Get(ctx context.Context, shopID, id uuid.UUID) (Customer, error) {
	row, err := queries.CustomerGetForShop(ctx, s.pool, db.CustomerGetForShopParams{ID: id, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Customer{}, ErrNotFound
	}
	if err != nil {
		return Customer{}, fmt.Errorf("get customer %s: %w", id, err)
	}
	return FromRow(row), nil
}

// Query selects a page of a shop's customers.
type Query struct {
	// Search matches a fragment of the name (any case) or of the phone's digits.
	Search string
	// Status is "" (all) or one of the Status constants.
	Status string
	// Limit is the page size, 1 to MaxCustomerPage; 0 means DefaultCustomerPage.
	Limit int
	// Cursor is the Next of the previous page; "" starts at the beginning.
	Cursor string
}

// Page sizes of the customer list.
const (
	DefaultCustomerPage = 50
	MaxCustomerPage     = 200
)

// Page is one page of customers in creation order; Next is the cursor of the
// following page, "" on the last.
type Page struct {
	Customers []Customer
	Next      string
}

// List lists shopID's customers, a page at a time.
func (s *Service) List(ctx context.Context, shopID uuid.UUID, q Query) (Page, error) {
	limit := q.Limit
	if limit == 0 {
		limit = DefaultCustomerPage
	}
	if limit < 1 || limit > MaxCustomerPage {
		return Page{}, problem.Invalidf("limit", "limit must be a whole number from 1 to %d", MaxCustomerPage)
	}
	switch q.Status {
	case "", StatusOptedIn, StatusNotOptedIn, StatusOptedOut, StatusUnreachable:
	default:
		return Page{}, problem.Invalidf("status", "status must be opted_in, not_opted_in, opted_out or unreachable")
	}
	search := strings.TrimSpace(q.Search)
	if len(search) > 100 {
		return Page{}, problem.Invalidf("q", "q must be at most 100 characters")
	}
	if !utf8.ValidString(search) {
		return Page{}, problem.Invalidf("q", "q must be UTF-8 text")
	}
	afterAt, afterID, err := decodeCursor(q.Cursor)
	if err != nil {
		return Page{}, err
	}
	params := db.CustomerListParams{
		ShopID: shopID, AfterCreated: afterAt, AfterID: afterID, Status: q.Status, MaxRows: int32(limit + 1),
	}
	if search != "" {
		params.Searching = true
		params.NamePattern = "%" + escapeLike(search) + "%"
		if digits := phoneDigits(search); digits != "" {
			params.PhonePattern = "%" + digits + "%"
		}
	}
	rows, err := queries.CustomerList(ctx, s.pool, params)
	if err != nil {
		return Page{}, fmt.Errorf("list customers: %w", err)
	}
	var page Page
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		page.Next = encodeCursor(last.CreatedAt, last.ID)
	}
	page.Customers = make([]Customer, len(rows))
	for i, r := range rows {
		page.Customers[i] = FromRow(r)
	}
	return page, nil
}

// phoneDigits is the search's digits when it looks like (part of) a phone number:
// only digits, '+', spaces, dashes, dots and parentheses.
func phoneDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune("+ -.()", r):
		default:
			return ""
		}
	}
	return b.String()
}

// escapeLike escapes LIKE's wildcards (the default escape character is backslash).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// The cursor is opaque to clients: base64 of "<unix nanoseconds>.<id>" of the last row.
func encodeCursor(t time.Time, id uuid.UUID) string { return cursor.Encode(t, id) }

var errBadCursor = problem.Invalidf("cursor", "cursor is not one this server gave out; start again without it")

// decodeCursor reads a page's cursor; the empty one starts before every row.
func decodeCursor(c string) (time.Time, uuid.UUID, error) {
	if c == "" {
		return time.Unix(0, 0).UTC(), uuid.Nil, nil
	}
	t, id, err := cursor.Decode(c)
	if err != nil {
		return time.Time{}, uuid.Nil, errBadCursor
	}
	return t, id, nil
}

// Change is an owner's edit of a customer; nil fields stay as they are.
type Change struct {
	Name     *string
	Priority *int
	SMSOptIn *bool
	// Preferences, when set, replace the customer's (an empty value clears them).
	Preferences *Preferences
	// Language, when set, replaces the customer's own language: one of language.All in
	// any case, or "" to text them in the shop's again.
	Language *language.Code
	// MoveUp, when set, says whether they are offered earlier times for their
	// appointments.
	MoveUp *bool
	// Source says who made the change (the zero value: the API), for the consent record
	// of an opt-in or opt-out it makes.
	Source Source
}

// Update applies an owner's change. Opting in a customer who replied STOP is
// refused (ErrOptedOut): only their own START does that.
func (s *Service) Update(ctx context.Context, shopID, id uuid.UUID, ch Change) (Customer, error) {
	src, err := ch.Source.check()
	if err != nil {
		return Customer{}, err
	}
	var out Customer
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := queries.CustomerGetForShopForUpdate(ctx, tx, db.CustomerGetForShopForUpdateParams{ID: id, ShopID: shopID})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("get customer %s: %w", id, err)
		}
		c := FromRow(row)
		wasOptedIn := c.SMSOptIn
		if ch.Name != nil {
			name := strings.TrimSpace(*ch.Name)
			if len(name) > 200 || strings.ContainsRune(name, 0) {
				return problem.Invalidf("name", "name must be text of at most 200 characters")
			}
			c.Name = name
		}
		if ch.Priority != nil {
			if *ch.Priority < -1000 || *ch.Priority > 1000 {
				return problem.Invalidf("priority", "priority must be between -1000 and 1000")
			}
			c.Priority = *ch.Priority
		}
		if ch.SMSOptIn != nil {
			// The row lock makes this check and the update one step: a STOP that lands
			// meanwhile waits, and opted_out_at is never touched here anyway.
			if *ch.SMSOptIn && c.OptedOutAt != nil {
				return ErrOptedOut
			}
			c.SMSOptIn = *ch.SMSOptIn
		}
		if ch.Preferences != nil {
			p := *ch.Preferences
			if err := p.normalise(); err != nil {
				return err
			}
			if err := p.checkCatalog(ctx, tx, shopID); err != nil {
				return err
			}
			c.Preferences = p
		}
		if ch.Language != nil {
			lang, err := shops.CheckLanguage(*ch.Language)
			if err != nil {
				return err
			}
			c.Language = lang
		}
		if ch.MoveUp != nil {
			c.MoveUp = *ch.MoveUp
		}
		days, starts, ends, services, staff := c.Preferences.columns()
		updated, err := queries.CustomerUpdate(ctx, tx, db.CustomerUpdateParams{
			ID: id, ShopID: shopID, Name: c.Name, Priority: int32(c.Priority), SmsOptIn: c.SMSOptIn,
			PrefDays: days, PrefWindowStarts: starts, PrefWindowEnds: ends, PrefServices: services,
			PrefStaffIds: staff, Language: languageParam(c.Language), MoveUp: c.MoveUp,
		})
		if err != nil {
			return fmt.Errorf("update customer %s: %w", id, err)
		}
		out = FromRow(updated)
		if out.SMSOptIn == wasOptedIn || src.Method == SourceCustomer {
			return nil
		}
		// The owner turned the customer's consent on or off: on the record, with them.
		return s.recordConsent(ctx, tx, []ConsentChange{{
			ShopID: shopID, CustomerID: id, OptIn: out.SMSOptIn, Method: src.Method, By: src.By, Language: out.Language,
			At: s.cfg.Now().UTC(),
		}})
	})
	return out, err
}
