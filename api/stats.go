package api

// What the waitlist earned (issue 47): GET /api/stats. Package stats fills them from the
// records (openings, offers, bookings) as they stand when asked; nothing is counted as
// it happens, so nothing can drift.

// The groupings of Stats.GroupBy.
const (
	StatsByWeek    = "week"
	StatsByService = "service"
	StatsByStaff   = "staff"
	StatsByWave    = "wave"
)

// Stats are a shop's recovery figures for the openings whose appointment starts on a
// local date in [From, To] (both inclusive, YYYY-MM-DD in TimeZone, the shop's), in
// total and per group. Every figure belongs to the period of its opening's appointment:
// the offers, replies and bookings of an opening count where the opening counts, so the
// funnel is one population and revenue_cents is the sum of the filled-slots list (and
// its CSV export) for the same days, to the cent. Openings the owner cancelled count
// nowhere.
type Stats struct {
	From     string `json:"from"`
	To       string `json:"to"`
	TimeZone string `json:"time_zone"`
	// Currency is the shop's (lowercase ISO 4217); every *_cents figure is in it.
	Currency string `json:"currency"`
	// GroupBy is week, service, staff or wave.
	GroupBy string      `json:"group_by"`
	Totals  Figures     `json:"totals"`
	Groups  []StatGroup `json:"groups"`
}

// StatGroup is one group's figures. Keys: week, the ISO week of the appointment in the
// shop's time zone ("2026-W47", weeks start on Monday; every week of the period is
// listed, empty ones too, the first and last maybe partly in the period); service, the service booked (the opening's own if not
// booked; "" for an opening that names none); staff, the person's id ("" for anyone's
// time); wave, the wave number ("1", "2", …). Label is the key as an owner reads it.
// Groups by week, service and staff partition the totals; by wave they need not: an
// opening counts in every wave that texted it (openings, offers and replies), and is
// filled in the wave whose offer booked it.
type StatGroup struct {
	Key     string  `json:"key"`
	Label   string  `json:"label"`
	Figures Figures `json:"figures"`
}

// Figures are the recovery figures of a set of openings.
type Figures struct {
	// Openings: openings declared (not cancelled by the owner). OpeningsOffered: those
	// texted to at least once; OpeningsReplied: those at least one customer said YES or
	// NO to (an offer booked or declined).
	Openings        int `json:"openings"`
	OpeningsOffered int `json:"openings_offered"`
	OpeningsReplied int `json:"openings_replied"`
	// Filled: openings filled now (filled or completed): the filled-slots list.
	Filled int `json:"filled"`
	// FillRate is Filled / Openings, 0 to 1 to four decimal places (0 without openings).
	FillRate float64 `json:"fill_rate"`
	// TimeToFillMedianS and TimeToFillP90S: seconds from an opening's declaration to
	// its fill (its latest), over the filled openings, interpolated between the two
	// nearest (as Postgres' percentile_cont); null without filled openings.
	TimeToFillMedianS *int64 `json:"time_to_fill_median_s"`
	TimeToFillP90S    *int64 `json:"time_to_fill_p90_s"`
	// OffersSent: offers texted (the provider accepted the text), every generation.
	OffersSent int `json:"offers_sent"`
	// Replies are the offers sent by their outcome as the offers record it.
	Replies Replies `json:"replies"`
	// Bookings: bookings made (each YES that booked, whatever its payment became;
	// holds that lapsed unpaid are not bookings). Paid: bookings paid through their
	// payment link (confirmed with a checkout), PaidCents what they paid.
	Bookings  int   `json:"bookings"`
	Paid      int   `json:"paid"`
	PaidCents int64 `json:"paid_cents"`
	// RevenueCents: what the filled openings are worth, each its latest booking's
	// amount (the opening's price if it has none): the filled-slots list's amounts.
	RevenueCents int64 `json:"revenue_cents"`
	// Attended and NoShows: bookings the owner marked so.
	Attended int `json:"attended"`
	NoShows  int `json:"no_shows"`
	// MoveUps: bookings made by a move-up offer (a customer took the opening instead of
	// a later appointment they held).
	MoveUps int `json:"move_ups"`
}

// Replies count offers sent by outcome (the words of an offer's outcome in a customer's
// history): booked (their YES booked it), declined (they said NO), missed (someone else
// booked it or it closed first), no_reply (no YES or NO to it yet), failed (the text
// was not delivered, or the booking's payment failed). They add up to offers_sent.
type Replies struct {
	Booked   int `json:"booked"`
	Declined int `json:"declined"`
	Missed   int `json:"missed"`
	NoReply  int `json:"no_reply"`
	Failed   int `json:"failed"`
}
