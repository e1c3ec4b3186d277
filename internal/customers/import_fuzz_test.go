package customers

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/phone"
)

// FuzzImport feeds the CSV import's parser (what ImportCustomers reads before anything
// is written) any bytes. Whatever the file, it answers without panicking, either one of
// the errors that refuse a whole file or a report whose rows are consistent with the
// records it would write:
//
//   - every record has a valid E.164 phone, no two records share one, and each is the
//     line of a report row that is not rejected (and each such row is a record);
//   - a record's fields are within the import's bounds (name ≤ 200 bytes and UTF-8,
//     priority in [-1000, 1000], preferences that read back the same once written out,
//     a language that is empty or a supported code in its stored, lower-case form);
//   - a rejected row says why; rows name lines after the header, in order;
//   - no more than MaxImportRows rows, and the records encode to JSON, as the batch
//     statement receives them.
func FuzzImport(f *testing.F) {
	for _, seed := range []string{
		"phone,name,priority,sms_opt_in,preferences\n+15555550100,Ana,3,yes,days=mon;times=09:00-12:00\n",
		"\uFEFFPhone Number;Full Name\n+44 7700 900001;Bo\n+447700900001;Dup\n",
		"phone\n+15555550100\n\n  \n+1555\n\"+15555550101\n+15555550102\n",
		"name,mobile\n\"a,b\",+15555550100\nx,\"+1 (555) 555-0101\"\n",
		"phone,preferences\n+15555550100,none\n+15555550101,days=funday\n+15555550102,services=Cut, Beard\n",
		"phone,priority\n+15555550100,1001\n+15555550101,-5\n+15555550102,x\n",
		"no phone here\n1,2\n",
		"",
		"phone\n\xff\xfe\n",
		"phone,sms_opt_in\n+15555550100,maybe\n+15555550101,N\n",
		"phone,language\n+15555550100,ES\n+15555550101,\n+15555550102,de\n+15555550103, fr \n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		records, rep, err := parseImport(bytes.NewReader(file))
		if err != nil {
			if !errors.Is(err, ErrImportNotCSV) && !errors.Is(err, ErrImportNoPhone) && !errors.Is(err, ErrImportTooManyRows) {
				t.Fatalf("a file in memory was refused with %v, not one of the import's errors", err)
			}
			if len(records) != 0 || len(rep.Rows) != 0 {
				t.Fatalf("a refused file still gave %d records and %d rows", len(records), len(rep.Rows))
			}
			return
		}
		if len(rep.Rows) > MaxImportRows {
			t.Fatalf("%d rows, over MaxImportRows", len(rep.Rows))
		}
		accepted := map[int]string{} // line → phone of the rows not rejected
		prev := 1                    // the header's line
		for _, row := range rep.Rows {
			if row.Line < prev || row.Line < 2 {
				t.Fatalf("row for line %d after line %d (the header is line 1)", row.Line, prev)
			}
			prev = row.Line
			switch row.Result {
			case ImportRejected:
				if row.Reason == "" {
					t.Fatalf("line %d rejected without a reason", row.Line)
				}
			case "":
				if _, dup := accepted[row.Line]; dup {
					t.Fatalf("line %d accepted twice", row.Line)
				}
				accepted[row.Line] = row.Phone
			default:
				t.Fatalf("line %d has result %q before anything was written", row.Line, row.Result)
			}
		}
		if len(records) != len(accepted) {
			t.Fatalf("%d records but %d rows accepted", len(records), len(accepted))
		}
		phones := map[string]int{}
		for _, rec := range records {
			if !phone.Valid(rec.Phone) {
				t.Fatalf("line %d: record with phone %q, not E.164", rec.Line, rec.Phone)
			}
			if first, dup := phones[rec.Phone]; dup {
				t.Fatalf("lines %d and %d both import %s", first, rec.Line, rec.Phone)
			}
			phones[rec.Phone] = rec.Line
			if p, ok := accepted[rec.Line]; !ok || p != rec.Phone {
				t.Fatalf("record of line %d (%s) has no accepted row (row phone %q)", rec.Line, rec.Phone, p)
			}
			if rec.Name != nil && (*rec.Name == "" || len(*rec.Name) > 200 || !utf8.ValidString(*rec.Name)) {
				t.Fatalf("line %d: name %q out of bounds", rec.Line, *rec.Name)
			}
			if rec.Priority != nil && (*rec.Priority < -1000 || *rec.Priority > 1000) {
				t.Fatalf("line %d: priority %d out of bounds", rec.Line, *rec.Priority)
			}
			if rec.Prefs != nil {
				checkPrefs(t, rec.Line, rec.Prefs)
			}
			if rec.Language != "" && !slices.Contains(language.All, language.Code(rec.Language)) {
				t.Fatalf("line %d: language %q is not a stored code", rec.Line, rec.Language)
			}
		}
		if _, err := json.Marshal(records); err != nil {
			t.Fatalf("records do not encode for the batch statement: %v", err)
		}
	})
}

// checkPrefs: a record's preferences are what ParsePreferences accepts, and writing them
// out and reading them again gives the same.
func checkPrefs(t *testing.T, line int, ip *importPrefs) {
	t.Helper()
	if len(ip.Starts) != len(ip.Ends) {
		t.Fatalf("line %d: %d window starts, %d ends", line, len(ip.Starts), len(ip.Ends))
	}
	p := Preferences{Days: ip.Days, Services: ip.Services}
	for i := range ip.Starts {
		p.Windows = append(p.Windows, Window{Start: ip.Starts[i], End: ip.Ends[i]})
	}
	again, err := ParsePreferences(FormatPreferences(p, nil), nil)
	if err != nil {
		t.Fatalf("line %d: preferences %+v do not read back: %v", line, p, err)
	}
	if FormatPreferences(again, nil) != FormatPreferences(p, nil) {
		t.Fatalf("line %d: preferences %q read back as %q", line, FormatPreferences(p, nil), FormatPreferences(again, nil))
	}
}

// FuzzImportRoundTrip writes one customer as a spreadsheet would (encoding/csv, any
// name and priority, the phone with the spaces and dashes people type) and checks the
// parser reads back what was written: the phone without its separators, the name
// trimmed, the priority, the consent, the language in lower case. A line it cannot take is rejected with a reason,
// never dropped and never read as something else.
func FuzzImportRoundTrip(f *testing.F) {
	f.Add("+1 555-555-0100", "Ana Lima", "3", "yes", "es")
	f.Add("+44 (7700) 900.001", "  \"quoted\", with comma ", "-1000", "no", " FR ")
	f.Add("+15555550100", "line\nbreak", "", "", "")
	f.Add("+15555550100", strings.Repeat("é", 101), "1001", "maybe", "de")
	f.Fuzz(func(t *testing.T, number, name, priority, optIn, lang string) {
		for _, s := range []string{number, name, priority, optIn, lang} {
			// A NUL or an invalid byte refuses the whole file (not CSV text), and csv
			// turns \r\n inside a field into \n: neither is a value a line carries back.
			if strings.ContainsAny(s, "\x00\r") || !utf8.ValidString(s) {
				return
			}
		}
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.WriteAll([][]string{{"phone", "name", "priority", "sms_opt_in", "language"}, {number, name, priority, optIn, lang}}); err != nil {
			t.Fatal(err)
		}
		records, rep, err := parseImport(&b)
		if err != nil {
			t.Fatalf("a file of one well-formed line was refused: %v\n%s", err, b.String())
		}
		wantPhone := strings.Map(func(r rune) rune {
			if strings.ContainsRune(" -.()", r) {
				return -1
			}
			return r
		}, strings.TrimSpace(number))
		trimmedName := strings.TrimSpace(name)
		wantOK := strings.TrimSpace(number) != "" && phone.Valid(wantPhone) && len(trimmedName) <= 200
		if p := strings.TrimSpace(priority); p != "" {
			n, err := strconv.Atoi(p)
			wantOK = wantOK && err == nil && n >= -1000 && n <= 1000
		}
		switch strings.ToLower(strings.TrimSpace(optIn)) {
		case "", "yes", "y", "true", "1", "opted_in", "x", "no", "n", "false", "0", "not_opted_in":
		default:
			wantOK = false
		}
		wantLang := strings.ToLower(strings.TrimSpace(lang))
		if wantLang != "" && !slices.Contains(language.All, language.Code(wantLang)) {
			wantOK = false
		}
		if blankLine := strings.TrimSpace(number+name+priority+optIn+lang) == ""; blankLine {
			if len(rep.Rows) != 0 {
				t.Fatalf("a blank line gave rows %+v", rep.Rows)
			}
			return
		}
		if len(rep.Rows) != 1 {
			t.Fatalf("one line gave %d rows: %+v\n%s", len(rep.Rows), rep.Rows, b.String())
		}
		if !wantOK {
			if len(records) != 0 || rep.Rows[0].Result != ImportRejected || rep.Rows[0].Reason == "" {
				t.Fatalf("a line that cannot be imported was not rejected with a reason: %+v %+v", rep.Rows[0], records)
			}
			return
		}
		if len(records) != 1 {
			t.Fatalf("a valid line was rejected: %+v\n%s", rep.Rows[0], b.String())
		}
		rec := records[0]
		if rec.Phone != wantPhone {
			t.Fatalf("phone %q read back as %q", number, rec.Phone)
		}
		switch {
		case trimmedName == "" && rec.Name != nil:
			t.Fatalf("an empty name was read as %q", *rec.Name)
		case trimmedName != "" && (rec.Name == nil || *rec.Name != trimmedName):
			t.Fatalf("name %q read back as %v", trimmedName, rec.Name)
		}
		if p := strings.TrimSpace(priority); p != "" {
			n, _ := strconv.Atoi(p)
			if rec.Priority == nil || *rec.Priority != n {
				t.Fatalf("priority %q read back as %v", p, rec.Priority)
			}
		}
		if v := strings.ToLower(strings.TrimSpace(optIn)); v != "" {
			want := v == "yes" || v == "y" || v == "true" || v == "1" || v == "opted_in" || v == "x"
			if rec.OptIn == nil || *rec.OptIn != want {
				t.Fatalf("sms_opt_in %q read back as %v", optIn, rec.OptIn)
			}
		}
		if rec.Language != wantLang {
			t.Fatalf("language %q read back as %q", lang, rec.Language)
		}
	})
}
