// Package calendar makes each shop's calendar feed: an RFC 5545 iCalendar document, at a
// secret address (/calendar/<token>.ics), that Google, Apple and Outlook calendars
// subscribe to, so the shop's recovered bookings appear beside its own appointments.
//
// One VEVENT per opening that has had a booking, with a UID that never changes for the
// opening: held (TENTATIVE), confirmed (CONFIRMED), and CANCELLED once the hold lapsed,
// the payment was refunded or the opening was cancelled, so a subscribed calendar drops
// it. SEQUENCE and LAST-MODIFIED (and DTSTAMP, as RFC 5545 has it for a feed without a
// METHOD) move on with every change of what the event says, however soon it came and
// whatever changed it (the booking, the opening, the customer's name, the shop's
// settings): the feed keeps, in calendar_events, a hash of each event's content with
// the values it was shown with, and moves them on when the content differs (see
// db/queries/calendar.sql, CalendarEventsTrack). That is the feed's only write, once per
// change. With IncludeOpen, open
// openings show as TENTATIVE too. Times are UTC (a trailing Z), which every client shows
// in its own time zone; X-WR-TIMEZONE names the shop's. The summary carries the
// customer's first name and the description a masked number, unless the shop turned on
// full details: feed addresses get shared. Only openings starting from Back before now to
// Ahead after it are listed.
//
// The document is written with github.com/arran4/golang-ical (escaping, folding at 75
// octets without splitting a character) with CRLF line ends.
package calendar

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	ics "github.com/arran4/golang-ical"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/money"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// ErrNotFound means no shop has the token; the feed answers 404, like any unknown path.
var ErrNotFound = shops.ErrCalendarNotFound

// maxEvents bounds a feed.
const maxEvents = 5000

// Config configures the Service; zero fields mean the defaults.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PublicURL is the server's external base URL: the feed's address, the dashboard
	// link in each description and the domain of the UIDs.
	PublicURL string
	// Back and Ahead bound the openings listed by their start; default 60 and 180 days.
	Back, Ahead time.Duration
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Service makes feeds.
type Service struct {
	pool  *pgxpool.Pool
	shops *shops.Service
	cfg   Config
}

// New returns a Service.
func New(pool *pgxpool.Pool, shopsSvc *shops.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Back = cmp.Or(cfg.Back, 60*24*time.Hour)
	cfg.Ahead = cmp.Or(cfg.Ahead, 180*24*time.Hour)
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &Service{pool: pool, shops: shopsSvc, cfg: cfg}
}

// Path is the feed's path for a token: /calendar/<token>.ics.
func Path(token string) string { return "/calendar/" + token + ".ics" }

// URL is a shop's feed address: the public URL and Path (a path alone when the server
// has no public URL configured).
func URL(publicURL, token string) string {
	return strings.TrimRight(publicURL, "/") + Path(token)
}

// Options are a feed request's choices.
type Options struct {
	// IncludeOpen lists open openings as TENTATIVE events too (and ones cancelled or
	// expired unfilled as CANCELLED).
	IncludeOpen bool
}

// Feed is a rendered feed.
type Feed struct {
	Body []byte
	// ETag is a strong entity tag of Body (quoted).
	ETag string
}

// Feed renders the feed of the shop whose token it is. The token is looked up in
// Postgres on every call, so a rotated one is dead at once on every instance.
func (s *Service) Feed(ctx context.Context, token string, opts Options) (Feed, error) {
	shop, err := s.shops.ByCalendarToken(ctx, token)
	if err != nil {
		return Feed{}, err
	}
	now := s.cfg.Now()
	rows, err := queries.CalendarOpenings(ctx, s.pool, db.CalendarOpeningsParams{
		ShopID: shop.ID, FromTime: now.Add(-s.cfg.Back).UTC(), ToTime: now.Add(s.cfg.Ahead).UTC(),
		IncludeOpen: opts.IncludeOpen, MaxRows: maxEvents,
	})
	if err != nil {
		return Feed{}, fmt.Errorf("read calendar of shop %s: %w", shop.ID, err)
	}
	events := s.events(shop, rows, opts)
	if err := s.track(ctx, events, opts, now); err != nil {
		return Feed{}, err
	}
	body, err := s.render(shop, events)
	if err != nil {
		return Feed{}, err
	}
	sum := sha256.Sum256(body)
	return Feed{Body: body, ETag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}, nil
}

// event is one VEVENT: what it says (content) and the version it is shown as.
type event struct {
	openingID uuid.UUID
	content   content
	// changedAt is the latest change of the opening or its booking; firstSequence the
	// SEQUENCE an event first seen starts at (sequence: what the feed gave it before
	// calendar_events kept one).
	changedAt     time.Time
	firstSequence int
	sequence      int
	modified      time.Time
}

// content is what an event says: everything but its SEQUENCE, LAST-MODIFIED and
// DTSTAMP. Its hash tells a change.
type content struct {
	uid, summary, description, url, transp string
	status                                 ics.ObjectStatus
	start, end, created                    time.Time
}

// hash is SHA-256 of every field of c, each length-prefixed (no two contents write the
// same bytes).
func (c content) hash() []byte {
	h := sha256.New()
	for _, f := range []string{c.uid, c.summary, c.description, c.url, c.transp, string(c.status),
		c.start.UTC().Format(time.RFC3339Nano), c.end.UTC().Format(time.RFC3339Nano), c.created.UTC().Format(time.RFC3339Nano)} {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	return h.Sum(nil)
}

// events decides the feed's events from the openings.
func (s *Service) events(shop shops.Shop, rows []db.CalendarOpeningsRow, opts Options) []event {
	domain := "slotrecovery"
	if u, err := url.Parse(s.cfg.PublicURL); err == nil && u.Hostname() != "" {
		domain = u.Hostname()
	}
	dashboard := s.cfg.PublicURL + "/dashboard"
	var out []event
	for _, r := range rows {
		v := describe(shop, r, opts)
		if v.skip {
			continue
		}
		c := content{
			uid:     "opening-" + r.ID.String() + "@" + domain,
			summary: clean(v.summary), status: v.status,
			description: clean(strings.Join(append(v.lines, "Dashboard: "+dashboard), "\n")),
			start:       r.StartsAt.UTC(), end: r.StartsAt.Add(time.Duration(r.DurationMinutes) * time.Minute).UTC(),
			created: r.CreatedAt.UTC().Truncate(time.Second),
			// Busy while it holds the chair; a cancelled or open slot does not block the
			// owner's calendar.
			transp: "OPAQUE",
		}
		if s.cfg.PublicURL != "" {
			c.url = dashboard
		}
		if v.status == ics.ObjectStatusCancelled || v.open {
			c.transp = "TRANSPARENT"
		}
		out = append(out, event{openingID: r.ID, content: c, changedAt: r.LastModified,
			firstSequence: sequence(r.CreatedAt, r.LastModified)})
	}
	return out
}

// track records what the events say now and gives each its SEQUENCE and LAST-MODIFIED
// (CalendarEventsTrack), in one statement.
func (s *Service) track(ctx context.Context, events []event, opts Options, now time.Time) error {
	if len(events) == 0 {
		return nil
	}
	p := db.CalendarEventsTrackParams{IncludeOpen: opts.IncludeOpen, Now: now.UTC()}
	for _, e := range events {
		p.OpeningIds = append(p.OpeningIds, e.openingID)
		p.ContentHashes = append(p.ContentHashes, e.content.hash())
		p.FirstSequences = append(p.FirstSequences, int32(e.firstSequence))
		p.ChangedAt = append(p.ChangedAt, e.changedAt.UTC())
	}
	rows, err := queries.CalendarEventsTrack(ctx, s.pool, p)
	if err != nil {
		return fmt.Errorf("track calendar events: %w", err)
	}
	versions := make(map[uuid.UUID]db.CalendarEventsTrackRow, len(rows))
	for _, r := range rows {
		versions[r.OpeningID] = r
	}
	for i := range events {
		v, ok := versions[events[i].openingID]
		if !ok {
			return fmt.Errorf("track calendar events: no version for opening %s", events[i].openingID)
		}
		events[i].sequence, events[i].modified = int(v.Sequence), v.ModifiedAt.UTC().Truncate(time.Second)
	}
	return nil
}

func (s *Service) render(shop shops.Shop, events []event) ([]byte, error) {
	cal := ics.NewCalendar()
	cal.SetProductId("-//Slot Recovery//Calendar feed//EN")
	cal.SetCalscale("GREGORIAN")
	cal.SetXWRCalName(clean(shop.Name) + " – recovered slots")
	cal.SetXWRTimezone(shop.Timezone)
	// How often clients should poll: Apple and Outlook read these; Google polls on its
	// own schedule.
	cal.SetRefreshInterval("PT15M", ics.WithValue(string(ics.ValueDataTypeDuration)))
	cal.SetXPublishedTTL("PT15M")
	for _, e := range events {
		c := e.content
		ev := cal.AddEvent(c.uid)
		ev.SetDtStampTime(e.modified)
		ev.SetModifiedAt(e.modified)
		ev.SetCreatedTime(c.created)
		ev.SetSequence(e.sequence)
		ev.SetStartAt(c.start)
		ev.SetEndAt(c.end)
		ev.SetSummary(c.summary)
		ev.SetStatus(c.status)
		ev.SetDescription(c.description)
		if c.url != "" {
			ev.SetURL(c.url)
		}
		ev.SetProperty(ics.ComponentPropertyTransp, c.transp)
	}
	var b bytes.Buffer
	if err := cal.SerializeTo(&b, ics.WithNewLineWindows); err != nil {
		return nil, fmt.Errorf("write calendar: %w", err)
	}
	return b.Bytes(), nil
}

// view is what an opening's event says.
type view struct {
	skip    bool
	open    bool
	status  ics.ObjectStatus
	summary string
	lines   []string
}

// describe decides an opening's event from the opening and its latest booking.
func describe(shop shops.Shop, r db.CalendarOpeningsRow, opts Options) view {
	price := money.Format(r.PriceCents, shop.Currency)
	who, whoLine := customer(shop, r)
	// What was booked (the customer's service, in a shop with services), else the
	// opening's; with the opening's person ("Cut with Ana").
	service := r.Service
	if r.BookingID != "" && r.BookedService != "" {
		service = r.BookedService
	}
	switch {
	case r.StaffName != "" && service == "":
		service = r.StaffName
	case r.StaffName != "":
		service += " with " + r.StaffName
	}
	switch {
	case r.BookingStatus == "pending_payment":
		return view{status: ics.ObjectStatusTentative, summary: service + " – " + who, lines: []string{
			whoLine, "Price: " + price + " – awaiting payment (the slot is held for the customer)",
		}}
	case r.BookingStatus == "confirmed":
		paid := "paid"
		if shop.PaymentMode == shops.PaymentNone {
			paid = "booked; payment at the shop"
		}
		return view{status: ics.ObjectStatusConfirmed, summary: service + " – " + who, lines: []string{
			whoLine, "Price: " + money.Format(r.BookingAmountCents, shop.Currency) + " – " + paid,
		}}
	case r.Status == "cancelled":
		v := view{status: ics.ObjectStatusCancelled, summary: "Cancelled: " + service, lines: []string{"The shop cancelled this opening."}}
		if r.BookingID != "" {
			v.summary += " – " + who
			v.lines = append([]string{whoLine}, v.lines...)
		}
		return v
	case r.BookingID != "" && r.BookingRefunded:
		return view{status: ics.ObjectStatusCancelled, summary: "Cancelled: " + service + " – " + who, lines: []string{
			whoLine, "Price: " + price + " – payment refunded; the booking is off.",
		}}
	case r.Status == "open" && opts.IncludeOpen:
		v := view{open: true, status: ics.ObjectStatusTentative, summary: "Open slot: " + service, lines: []string{
			"Not booked yet: offered by text to your customers.", "Price: " + price,
		}}
		switch {
		case r.BookingStatus == "moved":
			v.lines[0] = "Not booked: " + who + " moved up to an earlier time, and it is offered again."
		case r.BookingID != "":
			v.lines[0] = "Not booked: " + who + "'s hold lapsed, and it is offered again."
		}
		return v
	case r.BookingStatus == "moved":
		// A booking made by a YES that its customer moved up (its payment went with it).
		return view{status: ics.ObjectStatusCancelled, summary: "Moved: " + service + " – " + who, lines: []string{
			whoLine, who + " moved up to an earlier time; this slot is not booked.",
		}}
	case r.BookingID != "":
		return view{status: ics.ObjectStatusCancelled, summary: "Cancelled: " + service + " – " + who, lines: []string{
			whoLine, "Price: " + price + " – the hold lapsed (payment not completed); the slot is not booked.",
		}}
	case opts.IncludeOpen && r.Status != "open":
		return view{open: true, status: ics.ObjectStatusCancelled, summary: "Not filled: " + service, lines: []string{
			"Nobody took this opening before it closed.", "Price: " + price,
		}}
	}
	return view{skip: true}
}

// customer is the booking's customer as the feed names them: the first name (and a
// masked number), or, with the shop's full details on, the whole name and number.
func customer(shop shops.Shop, r db.CalendarOpeningsRow) (who, line string) {
	switch {
	case r.BookingID == "":
		return "", ""
	case r.CustomerErased:
		return "(erased)", "Customer: (erased at their request)"
	case shop.CalendarFullDetails:
		name := cmp.Or(strings.TrimSpace(r.CustomerName), "(no name)")
		return name, "Customer: " + name + ", " + r.CustomerPhone
	}
	first := "customer"
	if f := strings.Fields(r.CustomerName); len(f) > 0 {
		first = f[0]
	}
	return first, "Customer: " + first + " (" + phone.Mask(r.CustomerPhone) + ")"
}

// sequence is the SEQUENCE an event first seen starts at: tenths of a second from the
// opening's creation to its latest change, which is what the feed gave every event
// before it kept their versions (calendar_events); calendars holding one see the next
// change as newer. A year fits an int32 600 times.
func sequence(created, modified time.Time) int {
	d := modified.Sub(created) / (100 * time.Millisecond)
	return int(max(0, min(d, 1<<31-1)))
}

// clean makes text safe to write: no control characters but newlines (a carriage
// return, which the text escaping leaves alone, would break a line) and valid UTF-8.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// LookupID is an opening's UID's id part, for tests and tools: the feed's UIDs are
// "opening-<id>@<domain>".
func LookupID(uid string) (uuid.UUID, bool) {
	rest, ok := strings.CutPrefix(uid, "opening-")
	if !ok {
		return uuid.Nil, false
	}
	id, _, _ := strings.Cut(rest, "@")
	u, err := uuid.Parse(id)
	return u, err == nil
}
