package api

import (
	"time"

	"github.com/google/uuid"
)

// The record of an opening's offers and a customer's (issue 47): GET
// /api/openings/{id}/offers, /api/openings/{id}/explain, /api/customers/{id}/offers and a
// customer's stats. Package offers and customers fill them.

// CustomerRef names a customer in a record (an erased customer's name is "").
type CustomerRef struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// OfferTexted is one customer a wave texted (or is texting), with the reason in words.
type OfferTexted struct {
	Customer CustomerRef `json:"customer"`
	// Rank is the customer's place in the wave, 1 first (0: recorded before ranks were).
	Rank   int    `json:"rank"`
	Reason string `json:"reason"`
}

// OfferSkipped counts who a wave left out, by the first reason that held.
type OfferSkipped struct {
	OptedOut       int `json:"opted_out"`
	Cooldown       int `json:"cooldown"`
	DailyCap       int `json:"daily_cap"`
	QuietHours     int `json:"quiet_hours"`
	NoFitService   int `json:"no_fit_service"`
	NoFitStaff     int `json:"no_fit_staff"`
	NoFitWindow    int `json:"no_fit_window"`
	NoConsent      int `json:"no_consent"`
	NoShows        int `json:"no_shows"`
	AlreadyOffered int `json:"already_offered"`
	// Paused: the customer texted PAUSE, and its 14 days had not ended.
	Paused int `json:"paused"`
}

// OfferWave is one wave of an opening: when it was recorded, under which ranking, who it
// texted and how many it left out for each reason. A reopened opening's waves start
// again at 1 in a new generation.
type OfferWave struct {
	N          int           `json:"n"`
	Generation int           `json:"generation"`
	At         time.Time     `json:"at"`
	Ranking    string        `json:"ranking"`
	Texted     []OfferTexted `json:"texted"`
	Skipped    OfferSkipped  `json:"skipped"`
}

// OfferReply is a customer's text answering an offer of the opening, with the outcome it
// was given (the X-Slot-Outcome words: booked, taken, declined, …).
type OfferReply struct {
	Customer CustomerRef `json:"customer"`
	At       time.Time   `json:"at"`
	Outcome  string      `json:"outcome"`
}

// OfferRecord is an opening's offers on the record: its waves and the replies to them.
type OfferRecord struct {
	Waves   []OfferWave  `json:"waves"`
	Replies []OfferReply `json:"replies"`
}

// OfferExplanation says why a customer was or was not texted an opening.
type OfferExplanation struct {
	Customer CustomerRef `json:"customer"`
	// Texted: texted (or being texted) in wave Wave of generation Generation, at At,
	// with rank Rank.
	Texted     bool       `json:"texted"`
	Generation int        `json:"generation,omitempty"`
	Wave       int        `json:"wave,omitempty"`
	At         *time.Time `json:"at,omitempty"`
	Rank       int        `json:"rank,omitempty"`
	// Skip is the first reason that left the customer out of the opening's latest wave
	// that judged them; Now the first that would leave them out now; StillHolds whether
	// Skip still does.
	Skip       string `json:"skip,omitempty"`
	Now        string `json:"now,omitempty"`
	StillHolds bool   `json:"still_holds"`
	// Words is the whole explanation as an owner reads it.
	Words string `json:"words"`
}

// OpeningRef names an opening in a customer's history.
type OpeningRef struct {
	ID       uuid.UUID `json:"id"`
	StartsAt time.Time `json:"starts_at"`
	Service  string    `json:"service"`
}

// OfferHistoryEntry is one offer a customer was made.
type OfferHistoryEntry struct {
	OfferID uuid.UUID  `json:"offer_id"`
	Opening OpeningRef `json:"opening"`
	// At is when it was texted (when it was recorded, if never); RecordedAt when the
	// wave recorded it (the next page starts before it).
	At         time.Time `json:"at"`
	RecordedAt time.Time `json:"recorded_at"`
	Generation int       `json:"generation"`
	Wave       int       `json:"wave"`
	// Outcome: sending, no_reply, booked, declined, missed, withdrawn, failed.
	Outcome string `json:"outcome"`
}

// CustomerStats are a customer's figures, computed from the records.
type CustomerStats struct {
	// Offers90d: offers texted in the last 90 days; Bookings90d: bookings made in them
	// (holds that lapsed unpaid are not bookings).
	Offers90d   int `json:"offers_90d"`
	Bookings90d int `json:"bookings_90d"`
	// Attended and NoShows: bookings marked so, ever; LapsedHolds: holds that lapsed
	// unpaid, ever.
	Attended    int `json:"attended"`
	NoShows     int `json:"no_shows"`
	LapsedHolds int `json:"lapsed_holds"`
	// LastOfferedAt and LastBookedAt: null means never.
	LastOfferedAt *time.Time `json:"last_offered_at"`
	LastBookedAt  *time.Time `json:"last_booked_at"`
}
