package shops

import (
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Formality is how a shop's texts address its customers, in the languages that have a
// choice (Spanish tú/usted, French tu/vous). Stored NULL and sent as null when it is
// FormalityDefault.
type Formality string

// Formalities. FormalityDefault is each language's own default: informal (tú) in
// Spanish, formal (vous) in French.
const (
	FormalityDefault  Formality = ""
	FormalityInformal Formality = "informal"
	FormalityFormal   Formality = "formal"
)

// ParseFormality reads a formality as an owner sends it: "informal" or "formal", in any
// case. The language's default is no value (null in the API, NULL stored), never a
// string.
func ParseFormality(s string) (Formality, error) {
	switch f := Formality(strings.ToLower(strings.TrimSpace(s))); f {
	case FormalityInformal, FormalityFormal:
		return f, nil
	}
	return "", problem.Invalidf("formality", "formality must be informal or formal, or null for the language's default (informal in Spanish, formal in French)")
}

// GSM7 says whether a shop's texts may write letters outside the GSM-7 alphabet as
// their GSM-7 base (á as a) where that makes the text fewer segments.
type GSM7 string

// GSM-7 modes. The zero value is GSM7Prefer.
const (
	// GSM7Prefer folds accents outside GSM-7 when it saves a segment: a text goes in
	// GSM-7 (160 characters a segment) instead of UCS-2 (70).
	GSM7Prefer GSM7 = "prefer"
	// GSM7Exact keeps every accent, whatever the segments.
	GSM7Exact GSM7 = "exact"
)

// ParseGSM7 reads a GSM-7 mode as an owner sends it: "prefer" or "exact", in any case.
func ParseGSM7(s string) (GSM7, error) {
	switch g := GSM7(strings.ToLower(strings.TrimSpace(s))); g {
	case GSM7Prefer, GSM7Exact:
		return g, nil
	}
	return "", problem.Invalidf("gsm7", "gsm7 must be prefer or exact")
}

// maxHelpContact bounds HelpContact: it goes into the HELP answer's one or two segments.
const maxHelpContact = 100

// CheckHelpContact checks a help contact an owner sends (a phone number, an e-mail or an
// address customers can reach the shop at): trimmed, at most 100 characters of one line.
// "" means none (the HELP answer gives the shop's SMS number).
func CheckHelpContact(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxHelpContact || strings.ContainsAny(s, "\x00\r\n\t") {
		return "", problem.Invalidf("help_contact", "help_contact must be one line of at most 100 characters (a phone number, an e-mail or an address), or null")
	}
	return s, nil
}

// normaliseWording checks the wording settings of a new or changed shop and puts them
// in their stored form (gsm7 "" is GSM7Prefer).
func (n *NewShop) normaliseWording() error {
	if n.Formality != FormalityDefault {
		f, err := ParseFormality(string(n.Formality))
		if err != nil {
			return err
		}
		n.Formality = f
	}
	if n.GSM7 == "" {
		n.GSM7 = GSM7Prefer
	}
	g, err := ParseGSM7(string(n.GSM7))
	if err != nil {
		return err
	}
	n.GSM7 = g
	n.HelpContact, err = CheckHelpContact(n.HelpContact)
	return err
}

// formalityParam stores FormalityDefault as NULL.
func formalityParam(f Formality) pgtype.Text {
	return pgtype.Text{String: string(f), Valid: f != FormalityDefault}
}

// textParam stores "" as NULL.
func textParam(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

// Country is the ISO 3166 code of the country the shop is in, as its time zone says,
// for the conventions of writing in it (the clock: "3:00 PM" in the US); "" when the
// zone is not one whose conventions the texts tell apart (the US, Canada, Mexico).
func (s Shop) Country() string {
	return zoneCountries[s.Timezone]
}

// zoneCountries maps the IANA zones of the countries whose writing conventions the texts
// tell apart to their country (from tzdata's zone1970.tab and its backward links).
var zoneCountries = func() map[string]string {
	m := map[string]string{}
	add := func(country string, zones ...string) {
		for _, z := range zones {
			m[z] = country
		}
	}
	add("US", "America/New_York", "America/Detroit", "America/Kentucky/Louisville", "America/Kentucky/Monticello",
		"America/Indiana/Indianapolis", "America/Indiana/Vincennes", "America/Indiana/Winamac", "America/Indiana/Marengo",
		"America/Indiana/Petersburg", "America/Indiana/Vevay", "America/Chicago", "America/Indiana/Tell_City",
		"America/Indiana/Knox", "America/Menominee", "America/North_Dakota/Center", "America/North_Dakota/New_Salem",
		"America/North_Dakota/Beulah", "America/Denver", "America/Boise", "America/Phoenix", "America/Los_Angeles",
		"America/Anchorage", "America/Juneau", "America/Sitka", "America/Metlakatla", "America/Yakutat", "America/Nome",
		"America/Adak", "Pacific/Honolulu", "America/Puerto_Rico", "America/Indianapolis", "America/Louisville",
		"America/Fort_Wayne", "US/Eastern", "US/Central", "US/Mountain", "US/Pacific", "US/Alaska", "US/Hawaii",
		"US/Arizona", "US/Michigan", "US/East-Indiana", "US/Indiana-Starke", "US/Aleutian", "US/Samoa", "Navajo",
		"America/Shiprock")
	add("CA", "America/St_Johns", "America/Halifax", "America/Glace_Bay", "America/Moncton", "America/Goose_Bay",
		"America/Toronto", "America/Montreal", "America/Nipigon", "America/Thunder_Bay", "America/Iqaluit",
		"America/Pangnirtung", "America/Winnipeg", "America/Rainy_River", "America/Resolute", "America/Rankin_Inlet",
		"America/Regina", "America/Swift_Current", "America/Edmonton", "America/Cambridge_Bay", "America/Yellowknife",
		"America/Inuvik", "America/Creston", "America/Dawson_Creek", "America/Fort_Nelson", "America/Whitehorse",
		"America/Dawson", "America/Vancouver", "America/Atikokan", "America/Blanc-Sablon", "Canada/Atlantic",
		"Canada/Central", "Canada/Eastern", "Canada/Mountain", "Canada/Newfoundland", "Canada/Pacific",
		"Canada/Saskatchewan", "Canada/Yukon")
	add("MX", "America/Mexico_City", "America/Cancun", "America/Merida", "America/Monterrey", "America/Matamoros",
		"America/Chihuahua", "America/Ciudad_Juarez", "America/Ojinaga", "America/Mazatlan", "America/Bahia_Banderas",
		"America/Hermosillo", "America/Tijuana", "America/Ensenada", "America/Santa_Isabel", "Mexico/BajaNorte",
		"Mexico/BajaSur", "Mexico/General")
	return m
}()
