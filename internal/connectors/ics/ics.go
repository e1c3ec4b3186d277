// Package ics reads a shop's calendar feed (Google Calendar's secret iCal address,
// Outlook's or Apple's published calendar: RFC 5545) into the book's appointment shape
// (internal/connectors). A feed is a snapshot, not a delivery: whoever polls it hands
// Parse the body it fetched (at most MaxFeed bytes, through the webhooks' guarded
// dialer) and the shop's time zone for times written without one.
//
// What it reads, per VEVENT:
//   - a one-off event, and an instance moved or cancelled on its own (RECURRENCE-ID):
//     booked, or cancelled with STATUS:CANCELLED. An instance is named UID + "/" + its
//     original start (RECURRENCE-ID) in UTC, so it is one appointment of the book.
//   - a series' instance removed with EXDATE: cancelled, named like the instance, with
//     the series' length.
//   - SEQUENCE orders an event's revisions (Version), then LAST-MODIFIED (else CREATED,
//     else DTSTAMP) (UpdatedAt).
//
// A series' own instances (RRULE, and the extra dates of RDATE, a DATE-TIME or a
// PERIOD that gives the instance its own length) are expanded by ParseWindow within a
// window (golang-ical parses but does not expand recurrences; github.com/teambition/
// rrule-go does), each a booked appointment unless EXDATE or a RECURRENCE-ID event
// stands for it; Parse leaves them out (Feed.Series lists their UIDs). An event with
// RDATE and no RRULE is a series of its DTSTART and those dates. All-day events (and
// all-day RDATEs) are not appointments and are skipped. An event gone from the feed is a
// cancellation only to whoever compares two snapshots (book.PollFeeds).
package ics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
	"github.com/teambition/rrule-go"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

// MaxFeed is the largest feed Parse reads; a longer one is connectors.ErrPayload.
const MaxFeed = 5 << 20

// Feed is what a calendar feed says.
type Feed struct {
	// Appointments are the feed's appointments, in the feed's order.
	Appointments []connectors.Appointment
	// Series are the UIDs of recurring series: their instances are expanded by
	// ParseWindow (within its window), not by Parse.
	Series []string
	// Skipped counts the events that are not appointments (all-day, unreadable times,
	// no UID, longer than a day, a recurrence rule that does not read).
	Skipped int

	// series are the recurring series read, for ParseWindow to expand.
	series []series
}

// series is a recurring event: its first instance as an appointment, its rule and its
// extra dates.
type series struct {
	first connectors.Appointment
	start time.Time // DTSTART in its own zone, which the rule's days and hours follow
	rrule string    // "" for a series of RDATEs only
	// rdates are the RDATE instances' starts, with the length of each in minutes (a
	// PERIOD's own, else the series').
	rdates []rdate
}

// MaxInstances bounds the instances ParseWindow expands of one series (a rule such as
// FREQ=MINUTELY would otherwise make a feed of a few bytes a book of millions).
const MaxInstances = 1000

// maxSteps bounds the instances ParseWindow walks through for one series, before its
// window included.
const maxSteps = 200_000

// Parse reads a feed. Times without a zone (floating), and those in a TZID Go does not
// know (Outlook's Windows names), are read in loc, the shop's time zone. A body that is
// not an iCalendar document is connectors.ErrPayload.
func Parse(r io.Reader, loc *time.Location) (Feed, error) {
	if loc == nil {
		loc = time.UTC
	}
	body, err := io.ReadAll(io.LimitReader(r, MaxFeed+1))
	if err != nil {
		return Feed{}, fmt.Errorf("read feed: %w", err)
	}
	if len(body) > MaxFeed {
		return Feed{}, fmt.Errorf("%w: a feed over %d bytes", connectors.ErrPayload, MaxFeed)
	}
	if !bytes.Contains(body, []byte("BEGIN:VCALENDAR")) {
		return Feed{}, fmt.Errorf("%w: not an iCalendar document", connectors.ErrPayload)
	}
	cal, err := ical.ParseCalendar(bytes.NewReader(body))
	if err != nil {
		return Feed{}, fmt.Errorf("%w: %v", connectors.ErrPayload, err)
	}
	var f Feed
	for _, e := range cal.Events() {
		f.read(e, loc)
	}
	return f, nil
}

// ParseWindow is Parse with the series' instances that start in [from, to) expanded
// (RRULE, github.com/teambition/rrule-go, in the zone of the series' DTSTART so a weekly
// 10:00 stays 10:00 across a DST change): each is a booked appointment named like an
// instance (UID + "/" + its start), unless EXDATE deleted it or a RECURRENCE-ID event
// describes it, which then stand for it; RDATE's dates join the rule's, each instance
// once. At most MaxInstances a series.
func ParseWindow(r io.Reader, loc *time.Location, from, to time.Time) (Feed, error) {
	f, err := Parse(r, loc)
	if err != nil {
		return Feed{}, err
	}
	named := make(map[string]bool, len(f.Appointments))
	for _, a := range f.Appointments {
		named[a.ExternalID] = true
	}
	for _, sr := range f.series {
		set, ok := sr.set()
		if !ok {
			f.Skipped++
			continue
		}
		next := set.Iterator()
		lengths := make(map[int64]int, len(sr.rdates))
		for _, r := range sr.rdates {
			lengths[r.at.Unix()] = r.minutes
		}
		// steps also bounds the instances before the window: a rule begun long ago
		// (FREQ=SECONDLY in 1970) is given up rather than walked to today.
		for n, steps := 0, 0; n < MaxInstances && steps < maxSteps; steps++ {
			t, ok := next()
			if !ok || !t.Before(to) {
				break
			}
			if t.Before(from) {
				continue
			}
			n++
			x := sr.first
			x.ExternalID, x.StartsAt = instanceID(sr.first.ExternalID, t), t.UTC()
			if named[x.ExternalID] {
				continue
			}
			if m, ok := lengths[t.Unix()]; ok {
				x.DurationMinutes = m
			}
			f.Appointments = append(f.Appointments, x)
		}
	}
	return f, nil
}

// set is the series' instances: its rule's and its RDATEs (a series without a rule
// starts at DTSTART); false when the rule does not read.
func (sr series) set() (*rrule.Set, bool) {
	var set rrule.Set
	if sr.rrule == "" {
		set.RDate(sr.start)
	} else {
		opt, err := rrule.StrToROptionInLocation(sr.rrule, sr.start.Location())
		if err != nil {
			return nil, false
		}
		opt.Dtstart = sr.start
		rule, err := rrule.NewRRule(*opt)
		if err != nil {
			return nil, false
		}
		set.RRule(rule)
	}
	for _, r := range sr.rdates {
		set.RDate(r.at)
	}
	return &set, true
}

// read adds what event e says to f.
func (f *Feed) read(e *ical.VEvent, loc *time.Location) {
	uid := strings.TrimSpace(e.Id())
	start, allDay, err := propTime(e.GetProperty(ical.ComponentPropertyDtStart), loc)
	if uid == "" || err != nil || allDay {
		f.Skipped++
		return
	}
	minutes, ok := length(e, start, loc)
	if !ok {
		f.Skipped++
		return
	}
	a := connectors.Appointment{
		Source: connectors.SourceICS, ExternalID: uid, Status: connectors.StatusBooked, StartsAt: start.UTC(),
		DurationMinutes: minutes, Service: text(e, ical.ComponentPropertySummary), Version: sequence(e),
		UpdatedAt: updated(e), ExternalStaff: organizer(e),
	}
	a.CustomerName, a.Phone = attendee(e)
	if a.Phone == "" {
		a.Phone = phoneIn(text(e, ical.ComponentPropertyDescription))
	}
	if strings.EqualFold(text(e, ical.ComponentPropertyStatus), "CANCELLED") {
		a.Status = connectors.StatusCancelled
	}
	if rid := e.GetProperty(ical.ComponentPropertyRecurrenceId); rid != nil {
		orig, _, err := propTime(rid, loc)
		if err != nil {
			f.Skipped++
			return
		}
		a.ExternalID = instanceID(uid, orig)
		f.Appointments = append(f.Appointments, a)
		return
	}
	rule := ""
	if p := e.GetProperty(ical.ComponentPropertyRrule); p != nil {
		rule = p.Value
	}
	rdates := rdatesOf(e, loc, minutes)
	if rule == "" && len(rdates) == 0 {
		f.Appointments = append(f.Appointments, a)
		return
	}
	f.Series = append(f.Series, uid)
	f.series = append(f.series, series{first: a, start: start, rrule: rule, rdates: rdates})
	for _, p := range e.GetProperties(ical.ComponentPropertyExdate) {
		for _, v := range strings.Split(p.Value, ",") {
			one := *p
			one.Value = strings.TrimSpace(v)
			at, allDay, err := propTime(&one, loc)
			if err != nil || allDay {
				continue
			}
			x := a
			x.ExternalID, x.StartsAt, x.Status = instanceID(uid, at), at.UTC(), connectors.StatusCancelled
			f.Appointments = append(f.Appointments, x)
		}
	}
}

// rdate is one RDATE instance: its start and length in minutes.
type rdate struct {
	at      time.Time
	minutes int
}

// rdatesOf reads e's RDATE properties: each DATE-TIME an instance of the series' length
// (minutes), each PERIOD (start/end or start/duration) one of its own length; dates
// (all-day) and values that do not read are left out. At most MaxInstances.
func rdatesOf(e *ical.VEvent, loc *time.Location, minutes int) []rdate {
	var out []rdate
	for _, p := range e.GetProperties(ical.ComponentPropertyRdate) {
		for _, v := range strings.Split(p.Value, ",") {
			if len(out) >= MaxInstances {
				return out
			}
			one := *p
			start, end, period := strings.Cut(strings.TrimSpace(v), "/")
			one.Value = start
			at, allDay, err := propTime(&one, loc)
			if err != nil || allDay {
				continue
			}
			m := minutes
			if period {
				d, ok := periodLength(&one, at, end, loc)
				if !ok {
					continue
				}
				m = d
			}
			out = append(out, rdate{at: at, minutes: m})
		}
	}
	return out
}

// periodLength is the minutes of an RDATE PERIOD from at to end (a DATE-TIME, in the
// property's zone, or a DURATION); false outside 1 minute to a day.
func periodLength(p *ical.IANAProperty, at time.Time, end string, loc *time.Location) (int, bool) {
	var d time.Duration
	if strings.HasPrefix(end, "P") || strings.HasPrefix(end, "+P") {
		var err error
		if d, err = duration(end); err != nil {
			return 0, false
		}
	} else {
		one := *p
		one.Value = end
		t, allDay, err := propTime(&one, loc)
		if err != nil || allDay {
			return 0, false
		}
		d = t.Sub(at)
	}
	m := int(d / time.Minute)
	return m, m >= 1 && m <= 1440
}

// instanceID names one instance of series uid by its original start.
func instanceID(uid string, originalStart time.Time) string {
	return uid + "/" + originalStart.UTC().Format(time.RFC3339)
}

var errNoProp = errors.New("ics: no such property")

// propTime reads a DATE-TIME or DATE property: in UTC ("Z"), in its TZID when Go knows
// it, else in loc. allDay is set for a DATE.
func propTime(p *ical.IANAProperty, loc *time.Location) (t time.Time, allDay bool, err error) {
	if p == nil {
		return time.Time{}, false, errNoProp
	}
	v := strings.TrimSpace(p.Value)
	if tz := p.ICalParameters["TZID"]; len(tz) == 1 {
		if l, err := time.LoadLocation(strings.Trim(tz[0], `"`)); err == nil {
			loc = l
		}
	}
	switch {
	case len(v) == 16 && strings.HasSuffix(v, "Z"):
		t, err = time.Parse("20060102T150405Z", v)
	case len(v) == 15:
		t, err = time.ParseInLocation("20060102T150405", v, loc)
	case len(v) == 8:
		t, err = time.ParseInLocation("20060102", v, loc)
		allDay = true
	default:
		err = fmt.Errorf("ics: time %q", v)
	}
	return t, allDay, err
}

// length is e's length in minutes, from DTEND or DURATION; false when it has neither
// or is not 1 minute to a day.
func length(e *ical.VEvent, start time.Time, loc *time.Location) (int, bool) {
	var d time.Duration
	if end, _, err := propTime(e.GetProperty(ical.ComponentPropertyDtEnd), loc); err == nil {
		d = end.Sub(start)
	} else if p := e.GetProperty(ical.ComponentPropertyDuration); p != nil {
		d, err = duration(p.Value)
		if err != nil {
			return 0, false
		}
	} else {
		return 0, false
	}
	m := int(d / time.Minute)
	return m, m >= 1 && m <= 1440
}

var durationRE = regexp.MustCompile(`^\+?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// duration reads an RFC 5545 DURATION (P1W, P1D, PT1H30M); negative ones are refused.
func duration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, fmt.Errorf("ics: duration %q", s)
	}
	var d time.Duration
	for i, unit := range []time.Duration{7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.Atoi(m[i+1])
		if err != nil || n > 100000 {
			return 0, fmt.Errorf("ics: duration %q", s)
		}
		d += time.Duration(n) * unit
	}
	return d, nil
}

// text is e's property p as text, its RFC 5545 escapes (\n, \, \; \\) read.
func text(e *ical.VEvent, p ical.ComponentProperty) string {
	if v := e.GetProperty(p); v != nil {
		return strings.TrimSpace(textUnescaper.Replace(v.Value))
	}
	return ""
}

var textUnescaper = strings.NewReplacer(`\n`, "\n", `\N`, "\n", `\,`, ",", `\;`, ";", `\\`, `\`)

func sequence(e *ical.VEvent) int64 {
	n, err := strconv.ParseInt(text(e, ical.ComponentPropertySequence), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// updated is when e last changed: LAST-MODIFIED, else CREATED, else DTSTAMP (which some
// feeds set to the time of the fetch); zero when none reads.
func updated(e *ical.VEvent) time.Time {
	for _, p := range []ical.ComponentProperty{ical.ComponentPropertyLastModified, ical.ComponentPropertyCreated, ical.ComponentPropertyDtstamp} {
		if t, _, err := propTime(e.GetProperty(p), time.UTC); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// organizer is the organizer's address (mailto: dropped), the feed's id of the person.
func organizer(e *ical.VEvent) string {
	v := text(e, ical.ComponentPropertyOrganizer)
	return strings.TrimPrefix(strings.TrimPrefix(v, "mailto:"), "MAILTO:")
}

// attendee is the first attendee's name (CN) and number (a tel: address, or a phone in
// its name), skipping the organizer.
func attendee(e *ical.VEvent) (name, number string) {
	org := text(e, ical.ComponentPropertyOrganizer)
	for _, p := range e.GetProperties(ical.ComponentPropertyAttendee) {
		if strings.EqualFold(p.Value, org) && org != "" {
			continue
		}
		if cn := p.ICalParameters["CN"]; len(cn) > 0 {
			name = strings.Trim(cn[0], `"`)
		}
		v := strings.TrimSpace(p.Value)
		if strings.HasPrefix(strings.ToLower(v), "tel:") {
			number = v[4:]
		} else {
			number = phoneIn(name)
		}
		return name, number
	}
	return "", ""
}

// phoneRE finds a number written with its "+" ("Kim, +1 555 555 0123") or after a label
// ("Phone: (555) 555-0123"); bare digits are too often dates and times.
var phoneRE = regexp.MustCompile(`(?i)(?:\b(?:tel|phone|mobile|cell|téléphone|teléfono)\b[:.]?\s*(\+?\(?[0-9][0-9 ().\-]{6,18}[0-9]))|(\+[0-9][0-9 ().\-]{6,18}[0-9])`)

// phoneIn finds the first phone number in s; the book decides whether it reads as one.
func phoneIn(s string) string {
	m := phoneRE.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1] + m[2])
}
