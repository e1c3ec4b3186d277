package join

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Consent kinds.
const (
	KindOptIn  = "opt_in"
	KindOptOut = "opt_out"
)

// Consent methods: how the customer's consent was given or taken back.
const (
	MethodPage      = "page"
	MethodKeyword   = "keyword"
	MethodImport    = "import"
	MethodAPI       = "api"
	MethodDashboard = "dashboard"
	MethodReply     = "reply"
)

// Disclosure is the wording a consent was given to.
type Disclosure struct {
	Version string `json:"version"`
	// SHA256 is the hex SHA-256 of Text.
	SHA256 string `json:"sha256"`
	Text   string `json:"text"`
}

// Confirmation is the customer's message that confirmed a consent.
type Confirmation struct {
	MessageSID string    `json:"message_sid"`
	Body       string    `json:"body"`
	At         time.Time `json:"at"`
}

// Event is one entry of the consent record, in the shape the API and the export show.
type Event struct {
	ID         uuid.UUID `json:"id"`
	CustomerID uuid.UUID `json:"customer_id"`
	Kind       string    `json:"kind"`
	Method     string    `json:"method"`
	At         time.Time `json:"at"`
	// IP and UserAgent are the join page's visitor's ("" for other methods).
	IP              string        `json:"ip,omitempty"`
	UserAgent       string        `json:"user_agent,omitempty"`
	Language        string        `json:"language"`
	Disclosure      *Disclosure   `json:"disclosure"`
	Confirmation    *Confirmation `json:"confirmation"`
	AssertedByOwner bool          `json:"asserted_by_owner"`
	AssertedBy      string        `json:"asserted_by,omitempty"`
	RevocationText  string        `json:"revocation_text,omitempty"`
}

func eventOf(r db.ConsentEvent) Event {
	e := Event{
		ID: r.ID, CustomerID: r.CustomerID, Kind: r.Kind, Method: r.Method, At: r.At.UTC(), UserAgent: r.UserAgent.String,
		Language: r.Language, AssertedByOwner: r.AssertedByOwner, AssertedBy: r.AssertedBy.String,
		RevocationText: r.RevocationText.String,
	}
	if r.Ip != nil {
		e.IP = r.Ip.String()
	}
	if r.DisclosureText.Valid {
		e.Disclosure = &Disclosure{Version: r.DisclosureVersion.String, SHA256: hex.EncodeToString(r.DisclosureSha256), Text: r.DisclosureText.String}
	}
	if r.ConfirmationAt != nil {
		e.Confirmation = &Confirmation{MessageSID: r.ConfirmationSid.String, Body: r.ConfirmationBody.String, At: r.ConfirmationAt.UTC()}
	}
	return e
}

// History returns a customer's consent events, oldest first.
func (s *Service) History(ctx context.Context, shopID, customerID uuid.UUID) ([]Event, error) {
	rows, err := queries.ConsentEventsOfCustomer(ctx, s.pool, db.ConsentEventsOfCustomerParams{ShopID: shopID, CustomerID: customerID})
	if err != nil {
		return nil, fmt.Errorf("read consent of customer %s: %w", customerID, err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = eventOf(r)
	}
	return out, nil
}

// exportPage is how many events one read of the export takes.
const exportPage = 500

// csvHeader is the export's first row.
var csvHeader = []string{"event_id", "customer_id", "phone", "name", "kind", "method", "at", "ip", "user_agent", "language",
	"disclosure_version", "disclosure_sha256", "disclosure_text", "confirmation_message_sid", "confirmation_body",
	"confirmation_at", "asserted_by_owner", "asserted_by", "revocation_text"}

// erased is what the export shows for an erased customer's number and name.
const erased = "(erased)"

// WriteCSV writes shopID's consent events in [from, to) to w as CSV, oldest first, a
// page of rows at a time, with each customer's number and name as they are now (shown
// as erased for an erased customer: the proof stays, the person goes). Cells that a
// spreadsheet would run as a formula are quoted with a leading apostrophe.
func (s *Service) WriteCSV(ctx context.Context, w io.Writer, shopID uuid.UUID, from, to time.Time) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return 0, err
	}
	n := 0
	afterAt, afterID := time.Unix(0, 0).UTC(), uuid.Nil
	for {
		rows, err := queries.ConsentEventsBetween(ctx, s.pool, db.ConsentEventsBetweenParams{
			ShopID: shopID, FromAt: from.UTC(), ToAt: to.UTC(), AfterAt: afterAt, AfterID: afterID, MaxRows: exportPage,
		})
		if err != nil {
			return n, fmt.Errorf("read consent events of shop %s: %w", shopID, err)
		}
		for _, r := range rows {
			e := eventOf(db.ConsentEvent{
				ID: r.ID, ShopID: r.ShopID, CustomerID: r.CustomerID, Kind: r.Kind, Method: r.Method, At: r.At, Ip: r.Ip,
				UserAgent: r.UserAgent, Language: r.Language, DisclosureVersion: r.DisclosureVersion,
				DisclosureSha256: r.DisclosureSha256, DisclosureText: r.DisclosureText, ConfirmationSid: r.ConfirmationSid,
				ConfirmationBody: r.ConfirmationBody, ConfirmationAt: r.ConfirmationAt, AssertedByOwner: r.AssertedByOwner,
				AssertedBy: r.AssertedBy, RevocationText: r.RevocationText,
			})
			number, name := r.Phone, r.CustomerName
			if r.ErasedAt != nil {
				number, name = erased, erased
			}
			var d Disclosure
			if e.Disclosure != nil {
				d = *e.Disclosure
			}
			var conf Confirmation
			confAt := ""
			if e.Confirmation != nil {
				conf, confAt = *e.Confirmation, e.Confirmation.At.Format(time.RFC3339)
			}
			row := []string{e.ID.String(), e.CustomerID.String(), number, name, e.Kind, e.Method, e.At.Format(time.RFC3339),
				e.IP, e.UserAgent, e.Language, d.Version, d.SHA256, d.Text, conf.MessageSID, conf.Body, confAt,
				fmt.Sprint(e.AssertedByOwner), e.AssertedBy, e.RevocationText}
			for i := range row {
				row[i] = cell(row[i])
			}
			if err := cw.Write(row); err != nil {
				return n, err
			}
			n++
			afterAt, afterID = r.At, r.ID
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return n, err
		}
		if len(rows) < exportPage {
			return n, nil
		}
	}
}

// cell keeps a spreadsheet from running a value as a formula (CSV injection): one that
// starts with =, +, -, @, a tab or a carriage return gets a leading apostrophe. A phone
// number's + is kept as it is: an E.164 number is digits after it.
func cell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '-', '@', '\t', '\r':
		return "'" + v
	case '+':
		for _, r := range v[1:] {
			if r < '0' || r > '9' {
				return "'" + v
			}
		}
	}
	return v
}

// text is a nullable text parameter: NULL for "".
func text(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

// Forget drops, in the erasure's transaction q, what the consent record and the join
// requests hold of shopID's customer whose number was number: the requests go, and the
// record's events stay (the proof: what was agreed to, when, how, and the words of the
// confirmation) without the address and browser they came from. The customer's number
// and name are blanked by their erasure (customers.Blank), so the export shows them as
// erased. Package erasure is to call it beside inbox.Forget.
func Forget(ctx context.Context, q db.DBTX, shopID, customerID uuid.UUID, number string) error {
	if _, err := queries.ConsentEventsForget(ctx, q, db.ConsentEventsForgetParams{ShopID: shopID, CustomerID: customerID}); err != nil {
		return fmt.Errorf("forget consent details of customer %s: %w", customerID, err)
	}
	if _, err := queries.JoinRequestsForget(ctx, q, db.JoinRequestsForgetParams{
		ShopID: shopID, CustomerID: uuid.NullUUID{UUID: customerID, Valid: true}, Phone: number,
	}); err != nil {
		return fmt.Errorf("forget join requests of customer %s: %w", customerID, err)
	}
	return nil
}

// MaxRevocationText bounds the customer's words kept with an opt-out (a long text's
// first characters).
const MaxRevocationText = 1600

// optOutSpace derives an opt-out event's id from the text that asked for it.
var optOutSpace = uuid.MustParse("0b7f4c3e-5a1d-4f7e-9a63-2f1c8e6d4b90")

// RecordOptOut records that shop's customer customerID asked by text to stop (a STOP, or
// any reply read as an opt-out): method reply, their words as the revocation (at most
// MaxRevocationText characters), in their language, at at. The event's id is derived
// from the text's messageSID, so a text handled again records nothing more.
func (s *Service) RecordOptOut(ctx context.Context, shop shops.Shop, customerID uuid.UUID, lang language.Code, words, messageSID string, at time.Time) error {
	if _, ok := language.Parse(string(lang)); !ok {
		lang = shop.Language.Or(language.Default)
	}
	words = strings.ToValidUTF8(words, "")
	if r := []rune(words); len(r) > MaxRevocationText {
		words = string(r[:MaxRevocationText])
	}
	err := queries.ConsentEventRecord(ctx, s.pool, db.ConsentEventRecordParams{
		ID:     uuid.NewSHA1(optOutSpace, []byte(shop.ID.String()+":"+messageSID)),
		ShopID: shop.ID, CustomerID: customerID, Kind: KindOptOut, Method: MethodReply, At: at.UTC(), Language: string(lang),
		RevocationText: text(words),
	})
	if err != nil {
		return fmt.Errorf("record opt-out of customer %s: %w", customerID, err)
	}
	return nil
}

// OwnerConsent keeps the owner's opt-ins and opt-outs in the consent record: it is
// customers.Config.Consent, which customers calls in the transaction that changes the
// customer (an add, an update, a CSV import), so that the record and the change commit
// together. The events are asserted by the owner, by whom the owner's side says, with
// no disclosure and no confirmation: the owner vouches for the consent.
type OwnerConsent struct{}

// ownerEvent is one row of ConsentEventsRecordOwner's input.
type ownerEvent struct {
	ID         uuid.UUID `json:"id"`
	CustomerID uuid.UUID `json:"customer_id"`
	Kind       string    `json:"kind"`
	Method     string    `json:"method"`
	Language   string    `json:"language"`
	AssertedBy string    `json:"asserted_by"`
}

// RecordOwnerConsent records changes in tx, one statement a shop and moment (an import's
// batch is one).
func (OwnerConsent) RecordOwnerConsent(ctx context.Context, tx pgx.Tx, changes []customers.ConsentChange) error {
	type group struct {
		shop uuid.UUID
		at   time.Time
	}
	var order []group
	byGroup := map[group][]ownerEvent{}
	for _, ch := range changes {
		g := group{ch.ShopID, ch.At.UTC()}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		kind := KindOptOut
		if ch.OptIn {
			kind = KindOptIn
		}
		lang := ""
		if l, ok := language.Parse(string(ch.Language)); ok {
			lang = string(l)
		}
		byGroup[g] = append(byGroup[g], ownerEvent{ID: uuid.New(), CustomerID: ch.CustomerID, Kind: kind, Method: ch.Method,
			Language: lang, AssertedBy: ch.By})
	}
	for _, g := range order {
		body, err := json.Marshal(byGroup[g])
		if err != nil {
			return fmt.Errorf("encode owner's consent events: %w", err)
		}
		if err := queries.ConsentEventsRecordOwner(ctx, tx, db.ConsentEventsRecordOwnerParams{ShopID: g.shop, At: g.at, Events: body}); err != nil {
			return fmt.Errorf("record owner's consent for shop %s: %w", g.shop, err)
		}
	}
	return nil
}

// optInSpace derives a reply opt-in event's id from the text that asked for it.
var optInSpace = uuid.MustParse("5c2d7e1a-93b4-4f0e-8d6a-71e2b9c4f350")

// RecordOptIn records that shop's customer customerID asked by text to be texted again
// (START, or a YES that the carrier counted as one): method reply, their words as the
// confirmation of their own consent (no disclosure: they restart what they agreed to
// before), in their language, at at. The event's id is derived from the text's
// messageSID, so a text handled again records nothing more.
func (s *Service) RecordOptIn(ctx context.Context, shop shops.Shop, customerID uuid.UUID, lang language.Code, words, messageSID string, at time.Time) error {
	if _, ok := language.Parse(string(lang)); !ok {
		lang = shop.Language.Or(language.Default)
	}
	words = strings.ToValidUTF8(words, "")
	if r := []rune(words); len(r) > MaxRevocationText {
		words = string(r[:MaxRevocationText])
	}
	at = at.UTC()
	err := queries.ConsentEventRecordReplyOptIn(ctx, s.pool, db.ConsentEventRecordReplyOptInParams{
		ID:     uuid.NewSHA1(optInSpace, []byte(shop.ID.String()+":"+messageSID)),
		ShopID: shop.ID, CustomerID: customerID, At: at, Language: string(lang),
		ConfirmationSid: text(messageSID), ConfirmationBody: text(words),
	})
	if err != nil {
		return fmt.Errorf("record opt-in of customer %s: %w", customerID, err)
	}
	return nil
}
