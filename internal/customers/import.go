package customers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// MaxImportRows is how many customers one CSV import may hold.
const MaxImportRows = 10_000

// importBatch is how many rows go to Postgres in one statement.
const importBatch = 1000

// Import results of one row.
const (
	ImportCreated   = "created"
	ImportUpdated   = "updated"
	ImportUnchanged = "unchanged"
	ImportRejected  = "rejected"
)

// Import errors: the file as a whole cannot be imported, and nothing was.
var (
	ErrImportNotCSV = problem.New(problem.Invalid, "not_csv",
		"the file is not a CSV file (comma- or semicolon-separated text, UTF-8)")
	ErrImportNoPhone = &problem.Error{Kind: problem.Invalid, Code: "no_phone_column", Field: "file",
		Message: "the file's first line must name its columns, one of them phone (also: name, priority, sms_opt_in, preferences, language, move_up)"}
	ErrImportTooManyRows = &problem.Error{Kind: problem.Invalid, Code: "too_many_rows", Field: "file",
		Message: fmt.Sprintf("the file has more than %d customers; split it", MaxImportRows)}
	// ErrImportUnreadable wraps the body's own error (a cut-off upload; a body over its
	// cap, which the caller can tell apart with errors.As).
	ErrImportUnreadable = &problem.Error{Kind: problem.Invalid, Code: "upload_incomplete", Field: "file",
		Message: "the file could not be read to its end; send it again"}
)

// ImportRow is what became of one line of the file.
type ImportRow struct {
	Line       int
	Phone      string
	Result     string
	CustomerID uuid.UUID // uuid.Nil when rejected
	Reason     string    // why it was rejected, or a note
}

// ImportReport is what an import did, line by line.
type ImportReport struct {
	Created, Updated, Unchanged, Rejected int
	Rows                                  []ImportRow
}

// importRecord is one valid line, as CustomerImportBatch reads it: a missing key keeps
// the existing customer's value.
type importRecord struct {
	Line     int     `json:"line"`
	Phone    string  `json:"phone"`
	Name     *string `json:"name,omitempty"`
	Priority *int    `json:"priority,omitempty"`
	OptIn    *bool   `json:"sms_opt_in,omitempty"`
	// MoveUp: nil (an empty cell) keeps an existing customer's and gives a new one false.
	MoveUp *bool        `json:"move_up,omitempty"`
	Prefs  *importPrefs `json:"prefs,omitempty"`
	// Language is the customer's own; "" (left out) keeps an existing customer's and
	// leaves a new one in the shop's.
	Language string `json:"language,omitempty"`
	// Hmacs are the phone's keyed hashes, in hex: its suppression, if it has one, is
	// kept under one of them.
	Hmacs []string `json:"hmacs"`
}

type importPrefs struct {
	Days     []int    `json:"days"`
	Starts   []int    `json:"starts"`
	Ends     []int    `json:"ends"`
	Services []string `json:"services"`
	// Staff are the people the line names (StaffNames, from its staff= part), as the
	// import found them among the shop's.
	Staff      []uuid.UUID `json:"staff"`
	StaffNames []string    `json:"-"`
}

// columnNames maps the header names a file may use to the columns we read.
var columnNames = map[string]string{
	"phone": "phone", "phone_number": "phone", "mobile": "phone", "number": "phone",
	"name": "name", "full_name": "name",
	"priority":   "priority",
	"sms_opt_in": "sms_opt_in", "opt_in": "sms_opt_in", "sms_consent": "sms_opt_in", "consent": "sms_opt_in",
	"preferences": "preferences",
	"language":    "language", "lang": "language",
	"move_up": "move_up",
}

// Import reads a CSV file of customers (a header line naming the columns
// phone, name, priority, sms_opt_in, preferences, language, move_up; only phone is required) and
// adds or updates shopID's customers from it, matched by phone: importing a file again
// changes nothing. An empty cell keeps an existing customer's value; an empty language
// leaves a new customer in the shop's language (a file cannot put a customer back in
// the shop's language: the API and the dashboard can). A line without explicit consent (sms_opt_in yes) never opts anyone in, and a
// customer who replied STOP stays opted out whatever the file says. A bad line is
// rejected with its reason and the rest goes in; a file that is not CSV, has no phone
// column or holds more than MaxImportRows lines is refused whole, before anything is
// written.
//
// The file is read as a stream (memory grows with the rows kept, not with the file's
// bytes beyond them) and written in batches of one statement each.
//
// Each batch's opt-ins and opt-outs (a line that turned sms_opt_in on or off) are kept
// in the consent record (Config.Consent) in the batch's transaction, method import, as
// entered by src's By (the first src; none: "csv import").
func (s *Service) Import(ctx context.Context, shopID uuid.UUID, r io.Reader, src ...Source) (ImportReport, error) {
	by := Source{Method: SourceImport}
	if len(src) > 0 {
		by.By = src[0].By
	}
	by, err := by.check()
	if err != nil {
		return ImportReport{}, err
	}
	records, rep, err := parseImport(r)
	if err != nil {
		return ImportReport{}, err
	}
	if records, err = s.findStaff(ctx, shopID, records, &rep); err != nil {
		return ImportReport{}, err
	}
	now := s.cfg.Now().UTC()
	results := map[int]db.CustomerImportBatchRow{}
	var retry []importRecord
	run := func(batch []importRecord) error {
		for i := range batch {
			if batch[i].Hmacs == nil {
				for _, h := range s.phoneHashes(shopID, batch[i].Phone) {
					batch[i].Hmacs = append(batch[i].Hmacs, hex.EncodeToString(h))
				}
			}
		}
		body, err := json.Marshal(batch)
		if err != nil {
			return fmt.Errorf("encode import batch: %w", err)
		}
		// The batch and its consent record, together.
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := queries.CustomerImportBatch(ctx, tx, db.CustomerImportBatchParams{ShopID: shopID, Rows: body, Now: now})
			if err != nil {
				return fmt.Errorf("import customers: %w", err)
			}
			var changes []ConsentChange
			for _, row := range rows {
				results[int(row.Line)] = row
				if (row.Result == ImportCreated && row.OptedIn) || (row.Result == ImportUpdated && row.OptedIn != row.WasOptedIn) {
					changes = append(changes, ConsentChange{
						ShopID: shopID, CustomerID: row.ID, OptIn: row.OptedIn, Method: SourceImport, By: by.By,
						Language: language.Code(row.Language), At: now,
					})
				}
			}
			return s.recordConsent(ctx, tx, changes)
		})
	}
	for start := 0; start < len(records); start += importBatch {
		batch := records[start:min(start+importBatch, len(records))]
		if err := run(batch); err != nil {
			return ImportReport{}, err
		}
		for _, rec := range batch {
			if results[rec.Line].Result == "retry" {
				retry = append(retry, rec)
			}
		}
	}
	// A phone inserted by someone else between our read and our insert: once more, now
	// that it exists (it updates).
	if len(retry) > 0 {
		if err := run(retry); err != nil {
			return ImportReport{}, err
		}
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if row.Result == ImportRejected {
			continue
		}
		res, ok := results[row.Line]
		switch {
		case !ok || res.Result == "retry":
			row.Result, row.Reason = ImportRejected, "another change to this customer happened at the same time; import the file again"
		default:
			row.Result, row.CustomerID = res.Result, res.ID
			switch {
			case res.Suppression == suppressedErased:
				row.Reason = "this number was erased before: imported opted out; only their own START opts them back in"
			case res.Suppression == suppressedStop:
				row.Reason = "this number replied STOP: imported opted out; only their own START opts them back in"
			case res.OptedOut:
				row.Reason = "opted out by STOP: only their own START opts them back in"
			}
		}
	}
	for _, row := range rep.Rows {
		switch row.Result {
		case ImportCreated:
			rep.Created++
		case ImportUpdated:
			rep.Updated++
		case ImportUnchanged:
			rep.Unchanged++
		case ImportRejected:
			rep.Rejected++
		}
	}
	return rep, nil
}

// findStaff turns the people each record names (staff=Ana,Ben) into the shop's staff
// ids, as ParsePreferences does; a line naming someone the shop does not have is
// rejected, and dropped.
func (s *Service) findStaff(ctx context.Context, shopID uuid.UUID, records []importRecord, rep *ImportReport) ([]importRecord, error) {
	var staff []catalog.Staff
	looked := false
	kept := records[:0]
	for _, rec := range records {
		if rec.Prefs == nil || len(rec.Prefs.StaffNames) == 0 {
			kept = append(kept, rec)
			continue
		}
		if !looked {
			var err error
			if staff, err = catalog.New(s.pool, nil).Staff(ctx, shopID); err != nil {
				return nil, err
			}
			looked = true
		}
		ids, err := staffIDs(rec.Prefs.StaffNames, staff)
		if err != nil {
			for i := range rep.Rows {
				if rep.Rows[i].Line == rec.Line {
					rep.Rows[i].Result, rep.Rows[i].Reason = ImportRejected, err.Error()
				}
			}
			continue
		}
		rec.Prefs.Staff = ids
		kept = append(kept, rec)
	}
	return kept, nil
}

// staffIDs finds the people names name among staff (case aside), in order and once
// each; a name that is none of them is refused, the same way wherever preferences are
// written with names.
func staffIDs(names []string, staff []catalog.Staff) ([]uuid.UUID, error) {
	ids := []uuid.UUID{}
	for _, n := range names {
		i := slices.IndexFunc(staff, func(p catalog.Staff) bool { return strings.EqualFold(p.Name, n) })
		if i < 0 {
			return nil, fmt.Errorf("preferences: the shop has no person named %q", n)
		}
		if !slices.Contains(ids, staff[i].ID) {
			ids = append(ids, staff[i].ID)
		}
	}
	return ids, nil
}

// parseImport reads the whole file, checking each line: the valid ones come back as
// records, every line (valid or not) as a row of the report.
func parseImport(r io.Reader) ([]importRecord, ImportReport, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(4096)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, ImportReport{}, fmt.Errorf("%w: %w", ErrImportUnreadable, err) // the body's own error, e.g. too large
	}
	head = bytes.TrimPrefix(head, []byte("\uFEFF"))
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, ImportReport{}, ErrImportNoPhone
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head)) {
		return nil, ImportReport{}, ErrImportNotCSV
	}
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\uFEFF")) {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	firstLine, _, _ := bytes.Cut(head, []byte("\n"))
	if !bytes.ContainsRune(firstLine, ',') && bytes.ContainsRune(firstLine, ';') {
		cr.Comma = ';' // spreadsheets in many locales save CSV with semicolons
	}
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true

	header, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) || errors.Is(err, io.EOF) {
			return nil, ImportReport{}, ErrImportNotCSV
		}
		return nil, ImportReport{}, err
	}
	cols := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		h = strings.NewReplacer(" ", "_", "-", "_").Replace(h)
		if name, ok := columnNames[h]; ok {
			if _, dup := cols[name]; !dup {
				cols[name] = i
			}
		}
	}
	if _, ok := cols["phone"]; !ok {
		return nil, ImportReport{}, ErrImportNoPhone
	}

	var (
		records []importRecord
		rep     ImportReport
		seen    = map[string]int{} // phone → line
		n       int
	)
	for {
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) && !errors.Is(err, csv.ErrFieldCount) {
			if n++; n > MaxImportRows {
				return nil, ImportReport{}, ErrImportTooManyRows
			}
			if errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine {
				// A quote that never closes swallows the lines after it: each of them is
				// reported, so that no line of the file goes unmentioned.
				reason := fmt.Sprintf("not read: the quote opened on line %d never closes (lines %d to %d were read as one field)", pe.StartLine, pe.StartLine, pe.Line)
				for l := pe.StartLine; l <= pe.Line; l++ {
					if l > pe.StartLine {
						if n++; n > MaxImportRows {
							return nil, ImportReport{}, ErrImportTooManyRows
						}
					}
					rep.Rows = append(rep.Rows, ImportRow{Line: l, Result: ImportRejected, Reason: reason})
				}
				continue
			}
			rep.Rows = append(rep.Rows, ImportRow{Line: pe.StartLine, Result: ImportRejected,
				Reason: "not valid CSV: " + pe.Err.Error()})
			continue
		}
		if err != nil {
			return nil, ImportReport{}, fmt.Errorf("%w: %w", ErrImportUnreadable, err) // the body's own error, e.g. too large
		}
		line, _ := cr.FieldPos(0)
		if blank(fields) {
			continue
		}
		if n++; n > MaxImportRows {
			return nil, ImportReport{}, ErrImportTooManyRows
		}
		rec, reason := parseRecord(fields, cols)
		rec.Line = line
		row := ImportRow{Line: line, Phone: rec.Phone}
		if reason == "" {
			if first, dup := seen[rec.Phone]; dup {
				reason = fmt.Sprintf("the same phone as line %d", first)
			} else {
				seen[rec.Phone] = line
			}
		}
		if reason != "" {
			row.Result, row.Reason = ImportRejected, reason
		} else {
			records = append(records, rec)
		}
		rep.Rows = append(rep.Rows, row)
	}
	return records, rep, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence cut off at the end of a peek.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0; i++ {
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

func blank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// parseRecord reads one line; reason says why it cannot be imported.
func parseRecord(fields []string, cols map[string]int) (importRecord, string) {
	get := func(col string) string {
		i, ok := cols[col]
		if !ok || i >= len(fields) {
			return ""
		}
		return strings.TrimSpace(fields[i])
	}
	var rec importRecord
	for _, f := range fields {
		if !utf8.ValidString(f) || strings.ContainsRune(f, 0) {
			return rec, "not UTF-8 text"
		}
	}
	raw := get("phone")
	rec.Phone = strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -.()", r) {
			return -1
		}
		return r
	}, raw)
	if raw == "" {
		return rec, "phone is missing"
	}
	if !phone.Valid(rec.Phone) {
		rec.Phone = raw
		if len(rec.Phone) > 30 {
			rec.Phone = rec.Phone[:30]
		}
		return rec, "phone must be in E.164 form, e.g. +15555550100"
	}
	if name := get("name"); name != "" {
		if len(name) > 200 {
			return rec, "name must be at most 200 characters"
		}
		rec.Name = &name
	}
	if p := get("priority"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < -1000 || n > 1000 {
			return rec, "priority must be a whole number between -1000 and 1000"
		}
		rec.Priority = &n
	}
	if v := get("sms_opt_in"); v != "" {
		switch strings.ToLower(v) {
		case "yes", "y", "true", "1", "opted_in", "x":
			yes := true
			rec.OptIn = &yes
		case "no", "n", "false", "0", "not_opted_in":
			no := false
			rec.OptIn = &no
		default:
			return rec, "sms_opt_in must be yes or no (left empty: not opted in, or unchanged)"
		}
	}
	if v := get("move_up"); v != "" {
		switch strings.ToLower(v) {
		case "yes", "y", "true", "1", "x":
			yes := true
			rec.MoveUp = &yes
		case "no", "n", "false", "0":
			no := false
			rec.MoveUp = &no
		default:
			return rec, "move_up must be yes or no (left empty: no, or unchanged)"
		}
	}
	if v := get("preferences"); v != "" {
		p, staff, err := parsePreferences(v)
		if err != nil {
			return rec, err.Error()
		}
		ip := &importPrefs{Days: p.Days, Services: p.Services, Starts: []int{}, Ends: []int{}, Staff: []uuid.UUID{}, StaffNames: staff}
		for _, w := range p.Windows {
			ip.Starts, ip.Ends = append(ip.Starts, w.Start), append(ip.Ends, w.End)
		}
		if ip.Days == nil {
			ip.Days = []int{}
		}
		if ip.Services == nil {
			ip.Services = []string{}
		}
		rec.Prefs = ip
	}
	if v := get("language"); v != "" {
		lang, err := shops.ParseLanguage(v)
		if err != nil {
			return rec, languageCellReason
		}
		rec.Language = string(lang)
	}
	return rec, ""
}

// languageCellReason rejects a line whose language cell is not a supported code.
var languageCellReason = "language must be one of " + shops.LanguageCodes() + " (left empty: the shop's language, or unchanged)"

// ParsePreferences reads preferences written in one line, as a CSV cell or a form
// field holds them:
//
//	days=mon,tue,sat; times=09:00-12:00,17:00-19:00; services=Haircut,Beard trim; staff=Ana,Ben
//
// Every part is optional; "none" means no preferences. The result is checked and in
// canonical order. The staff= part names people of the shop, found among staff (its
// people, as catalog lists them) without regard to case: a name that is none of them is
// refused, as the CSV import refuses the line.
func ParsePreferences(s string, staff []catalog.Staff) (Preferences, error) {
	p, names, err := parsePreferences(s)
	if err != nil || len(names) == 0 {
		return p, err
	}
	if p.StaffIDs, err = staffIDs(names, staff); err != nil {
		return Preferences{}, err
	}
	return p, nil
}

// parsePreferences is ParsePreferences that also reads staff=Ana,Ben: the people's
// names, as written.
func parsePreferences(s string) (p Preferences, staff []string, err error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "none") {
		return p, nil, nil
	}
	for part := range strings.SplitSeq(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			return p, nil, errPrefsSyntax
		}
		var items []string
		for it := range strings.SplitSeq(val, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "days", "day":
			for _, it := range items {
				d, ok := ParseDay(it)
				if !ok {
					return p, nil, fmt.Errorf("preferences: %q is not a day of the week (mon, tue, ... sun)", it)
				}
				p.Days = append(p.Days, d)
			}
		case "times", "time", "windows", "hours":
			for _, it := range items {
				a, b, ok := strings.Cut(it, "-")
				start, ok1 := shops.ParseClock(strings.TrimSpace(a))
				end, ok2 := shops.ParseClock(strings.TrimSpace(b))
				if !ok || !ok1 || !ok2 {
					return p, nil, fmt.Errorf("preferences: %q is not a time window such as 09:00-12:00", it)
				}
				p.Windows = append(p.Windows, Window{Start: start, End: end})
			}
		case "services", "service":
			p.Services = append(p.Services, items...)
		case "staff", "people", "with":
			staff = append(staff, items...)
		default:
			return p, nil, errPrefsSyntax
		}
	}
	if err := p.normalise(); err != nil {
		if pe, ok := problem.As(err); ok {
			return p, nil, errors.New("preferences: " + pe.Message)
		}
		return p, nil, err
	}
	return p, staff, nil
}

var errPrefsSyntax = errors.New(`preferences must look like "days=mon,tue; times=09:00-12:00; services=Haircut; staff=Ana" (each part optional), or "none"`)

// FormatPreferences writes preferences the way ParsePreferences reads them, naming
// the people of StaffIDs by their names in staff (the shop's people; one it does not
// hold is left out, which cannot happen to a shop's own: people are never deleted).
func FormatPreferences(p Preferences, staff []catalog.Staff) string {
	var parts []string
	if len(p.Days) > 0 {
		names := make([]string, len(p.Days))
		for i, d := range p.Days {
			names[i] = DayName(d)
		}
		parts = append(parts, "days="+strings.Join(names, ","))
	}
	if len(p.Windows) > 0 {
		ws := make([]string, len(p.Windows))
		for i, w := range p.Windows {
			ws[i] = shops.FormatClock(w.Start) + "-" + shops.FormatClock(w.End)
		}
		parts = append(parts, "times="+strings.Join(ws, ","))
	}
	if len(p.Services) > 0 {
		parts = append(parts, "services="+strings.Join(p.Services, ","))
	}
	var people []string
	for _, id := range p.StaffIDs {
		if i := slices.IndexFunc(staff, func(s catalog.Staff) bool { return s.ID == id }); i >= 0 {
			people = append(people, staff[i].Name)
		}
	}
	if len(people) > 0 {
		parts = append(parts, "staff="+strings.Join(people, ","))
	}
	return strings.Join(parts, "; ")
}
