package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tableOwners names, for each table of db/schema.sql, the one package that changes it.
// Every other package asks the owner (whose methods take a transaction where a caller
// needs atomicity). Subpackages of the owner count as the owner.
var tableOwners = map[string]string{
	"shops":     "internal/shops",
	"customers": "internal/customers",
	// Dashboard sign-outs, kept in Postgres so that Redis losing its data brings no
	// session back.
	"dashboard_session_ends":     "internal/shops",
	"notify_phone_confirmations": "internal/shops",
	// Every STOP (and carrier opt-out) per shop, kept by a keyed hash whether or not the
	// number is a customer, so that a later import or add cannot opt it in.
	"sms_suppressions": "internal/customers",
	// A check value of each erasure key the suppressions were made under: a start whose
	// ERASURE_KEY leaves one out is refused.
	"erasure_key_checks": "internal/customers",
	// Each download of the customer list with whole phones, which the owner reads back.
	"customer_exports": "internal/customers",
	"slot_openings":    "internal/slots",
	"bookings":         "internal/ledger", // most booking writes are payment transitions
	"slot_offers":      "internal/offers",
	// Each recorded wave with who it left out and why (the offers' record).
	"offer_waves":      "internal/offers",
	"inbound_messages": "internal/inbound",
	"stripe_events":    "internal/ledger", // the webhook's event ledger
	"text_claims":      "internal/outbox",
	"delivery_reports": "internal/delivery", // the provider's status callbacks (offers read them to apply)
	// River clients' liveness: offers resumes the waves of instances that died.
	"client_heartbeats": "internal/offers",
	// Outbound webhooks: endpoints, the events recorded for them, their deliveries and
	// each delivery's attempts.
	"webhook_endpoints":  "internal/hooks",
	"webhook_events":     "internal/hooks",
	"webhook_deliveries": "internal/hooks",
	"webhook_attempts":   "internal/hooks",
	"idempotency_keys":   "internal/idempotency",
	// What each calendar feed event last said, so that its SEQUENCE and LAST-MODIFIED
	// move on with every change.
	"calendar_events": "internal/calendar",
	"staff":           "internal/catalog",
	"services":        "internal/catalog",
	// The owner's inbox: a conversation per shop and number, and its texts either way.
	// Others record in them through inbox's functions over their own transactions
	// (RecordIn, RecordOut, MarkSent, Forget, Purge).
	"conversations":         "internal/inbox",
	"conversation_messages": "internal/inbox",
	// Each shop's own sender (number and Messaging Service) and its US A2P 10DLC
	// registration, with every change of its statuses.
	"sms_senders":                  "internal/senders",
	"sms_registrations":            "internal/senders",
	"sms_registration_transitions": "internal/senders",
	// The shop's appointment book, and the opening each release of an appointment
	// declares (the claim whose primary key makes it once per cancellation).
	"appointments":         "internal/book",
	"appointment_openings": "internal/book",
	// The booking systems that keep the book (cal.com, Square, a calendar feed) and the
	// deliveries they made, remembered to acknowledge a redelivery.
	"connectors":           "internal/book",
	"connector_deliveries": "internal/book",
	// Joining from the join page: a request waits for the number's YES (and expires), and
	// the consent record keeps every opt-in and opt-out with its proof.
	"join_requests":           "internal/join",
	"appointment_write_backs": "internal/book",
	"booking_terms":           "internal/ledger", // a booking's payment page terms and acceptance (issue 48)
	"booking_fees":            "internal/ledger", // a booking's one fee (issue 48)
	"consent_events":          "internal/join",
	// What guards the join page against SMS pumping: the countries a shop accepts joins
	// from, its refusals counted by day and reason, the hours its budget was spent.
	"join_allowed_countries": "internal/join",
	"join_refusals":          "internal/join",
	"join_budget_spent":      "internal/join",
}

// writeKey names one write a package makes: a sqlc query (or rawSQL) and a table.
type writeKey struct {
	pkg, query, table string
}

// rawSQL stands for an SQL string literal in Go code in writeKey.query.
const rawSQL = "(SQL string)"

// writeExceptions are the writes to another package's table that are allowed, each with
// its reason.
var writeExceptions = map[writeKey]string{
	{"internal/slots", "BookingClaim", "slot_offers"}: "a YES's booking is one statement: " +
		"accepting the offer and losing the opening's other offers in the statement that fills the " +
		"opening is what makes a claim one round trip",
	{"internal/slots", "BookingClaim", "bookings"}: "the same statement inserts the booking: the claim " +
		"(slots) books and the payment ledger (internal/ledger) owns the booking from then on; splitting " +
		"the insert out would cost the YES a round trip, and the partial unique index it meets is the " +
		"fence against a double booking",
	{"internal/slots", "BookingClaim", "webhook_events"}: "the same statement records the YES's " +
		"outbound webhook events (an outbox: no booking without its events), whose data hooks.ClaimData " +
		"rendered in Go before the claim, through internal/hooks' own SQL function webhook_record, guarded " +
		"so a shop without endpoints never reaches it; a separate statement would cost the YES a round trip",
	{"internal/erasure", "CustomerEraseMessages", "inbound_messages"}: "an erasure blanks the " +
		"customer's texts in the same transaction as the customer row; inbound's log of texts is " +
		"written on the YES path, and erasure sits beside inbound, not above it",
	{"cmd/loadtest", rawSQL, "customers"}: "the load tool seeds thousands of customers straight into " +
		"the database of the server it measures; it is a client of the server, not part of it",
	{"cmd/loadtest", rawSQL, "inbound_messages"}: "the load tool stores a month of past texts before " +
		"it measures, as a database in service holds (the planner plans for the table's size); it is a " +
		"client of the server, not part of it",
}

// tableWrite is one write of a table found in Go code.
type tableWrite struct {
	pos   token.Position
	query string // a query name, or rawSQL
	table string
}

func (w tableWrite) String() string {
	return fmt.Sprintf("%s calls %s, which writes %s", w.pos, w.query, w.table)
}

// sqlFunctionWrites are the SQL functions of our schema that change tables, by the
// tables they change: a statement calling one writes them (the owner's SQL function is
// its way in SQL of writing, as its Go methods are in Go).
var sqlFunctionWrites = map[string][]string{
	"webhook_record": {"webhook_events"},
}

var (
	sqlLineComment = regexp.MustCompile(`--[^\n]*`)
	sqlStringLit   = regexp.MustCompile(`'(?:[^']|'')*'`)
	sqlWord        = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.]*`)
	queryName      = regexp.MustCompile(`(?m)^--\s*name:\s*(\w+)\s`)
)

// writtenTables returns the tables an SQL text changes: INSERT INTO t, UPDATE t (not
// FOR UPDATE, DO UPDATE or FOR NO KEY UPDATE), DELETE FROM t, wherever they stand (a
// CTE too), and the tables of the sqlFunctionWrites it calls. With upperOnly, only upper-case keywords count: that is how our SQL is
// written, and it keeps a Go error message ("update customers: %w") from counting.
func writtenTables(sql string, upperOnly bool) []string {
	sql = sqlLineComment.ReplaceAllString(sql, " ")
	sql = sqlStringLit.ReplaceAllString(sql, "''")
	words := sqlWord.FindAllString(sql, -1)
	is := func(i int, kw string) bool {
		if i < 0 || i >= len(words) {
			return false
		}
		if upperOnly {
			return words[i] == kw
		}
		return strings.EqualFold(words[i], kw)
	}
	var tables []string
	add := func(i int) {
		if is(i, "ONLY") {
			i++
		}
		if i >= len(words) {
			return
		}
		t := strings.ToLower(words[i])
		if dot := strings.LastIndexByte(t, '.'); dot >= 0 {
			t = t[dot+1:] // public.customers
		}
		if !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	for i := range words {
		switch {
		case is(i, "INSERT") && is(i+1, "INTO"):
			add(i + 2)
		case is(i, "DELETE") && is(i+1, "FROM"):
			add(i + 2)
		case is(i, "UPDATE") && !is(i-1, "FOR") && !is(i-1, "KEY") && !is(i-1, "DO"):
			add(i + 1)
		default:
			for _, t := range sqlFunctionWrites[strings.ToLower(words[i])] {
				if !slices.Contains(tables, t) {
					tables = append(tables, t)
				}
			}
		}
	}
	return tables
}

// queryWrites reads db/queries/*.sql: for each query (`-- name: X :kind`) that changes a
// table, the tables it changes.
func queryWrites(t *testing.T, root string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "db", "queries", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no db/queries/*.sql under %s: %v", root, err)
	}
	writes := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		marks := queryName.FindAllStringSubmatchIndex(text, -1)
		for i, m := range marks {
			end := len(text)
			if i+1 < len(marks) {
				end = marks[i+1][0]
			}
			name := text[m[2]:m[3]]
			if tables := writtenTables(text[m[1]:end], false); len(tables) > 0 {
				writes[name] = tables
			}
		}
	}
	return writes
}

// schemaTables lists the tables db/schema.sql creates.
func schemaTables(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "db", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, m := range regexp.MustCompile(`(?i)CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`).FindAllStringSubmatch(string(b), -1) {
		tables = append(tables, strings.ToLower(m[1]))
	}
	return tables
}

// goWrites finds, in one Go file, every use of a query that changes a table (a selector
// `.X`, called or passed as a method value) and every SQL string literal that changes a
// table with an owner.
func goWrites(fset *token.FileSet, f *ast.File, queries map[string][]string) []tableWrite {
	var found []tableWrite
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			for _, table := range queries[n.Sel.Name] {
				found = append(found, tableWrite{pos: fset.Position(n.Sel.Pos()), query: n.Sel.Name, table: table})
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return true
			}
			for _, table := range writtenTables(s, true) {
				if _, owned := tableOwners[table]; owned {
					found = append(found, tableWrite{pos: fset.Position(n.Pos()), query: rawSQL, table: table})
				}
			}
		}
		return true
	})
	return found
}

// foreignWrites checks the Go files of one package (rel, e.g. "internal/offers"): it
// returns a message for each write of a table that rel does not own and that is not an
// exception, and marks in used (when not nil) the exceptions it met.
func foreignWrites(rel string, fset *token.FileSet, files []*ast.File, queries map[string][]string, root string, used map[writeKey]bool) []string {
	var msgs []string
	for _, f := range files {
		for _, w := range goWrites(fset, f, queries) {
			owner := tableOwners[w.table]
			if within(rel, owner) {
				continue
			}
			if k := (writeKey{rel, w.query, w.table}); writeExceptions[k] != "" {
				if used != nil {
					used[k] = true
				}
				continue
			}
			file := w.pos.Filename
			if r, err := filepath.Rel(root, file); err == nil {
				file = r
			}
			if owner == "" {
				owner = "nobody: add it to tableOwners"
			}
			msgs = append(msgs, fmt.Sprintf("%s: %s:%d uses %s, which writes %s, owned by %s",
				rel, filepath.ToSlash(file), w.pos.Line, w.query, w.table, owner))
		}
	}
	return msgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	for _, p := range modulePackages(t) {
		if p.Rel == "internal/archtest" {
			return filepath.Dir(filepath.Dir(p.Dir))
		}
	}
	t.Fatal("internal/archtest is not in go list")
	return ""
}

// TestOneWriterPerTable: only a table's owner runs the queries (or SQL) that change it.
// internal/db, the generated code, holds every query and calls none.
func TestOneWriterPerTable(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	queries := queryWrites(t, root)
	for _, tables := range queries {
		for _, table := range tables {
			if _, ok := tableOwners[table]; !ok {
				t.Errorf("a query writes %s, which has no owner: add it to tableOwners", table)
			}
		}
	}
	for _, table := range schemaTables(t, root) {
		if _, ok := tableOwners[table]; !ok {
			t.Errorf("db/schema.sql creates %s, which has no owner: add it to tableOwners", table)
		}
	}
	used := map[writeKey]bool{}
	for _, p := range modulePackages(t) {
		if p.Rel == "internal/db" {
			continue
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("parse %s: %v", name, err)
				continue
			}
			files = append(files, f)
		}
		for _, msg := range foreignWrites(p.Rel, fset, files, queries, root, used) {
			t.Error(msg)
		}
	}
	for k := range writeExceptions {
		if !used[k] {
			t.Errorf("exception %v is met nowhere any more: drop it from writeExceptions", k)
		}
	}
}

// TestOneWriterPerTableCatches shows the rule at work on made-up packages: a foreign
// query, a foreign SQL string and an exception's query used by another package fail;
// the owner's own writes, reads and lower-case prose pass.
func TestOneWriterPerTableCatches(t *testing.T) {
	t.Parallel()
	queries := map[string][]string{
		"OfferDecline":     {"slot_offers"},
		"OpeningExpire":    {"slot_openings"},
		"BookingClaim":     {"slot_openings", "slot_offers", "bookings"},
		"CustomerOptOut":   {"customers"},
		"InboundStoreMany": {"inbound_messages"},
	}
	parse := func(src string) (*token.FileSet, []*ast.File) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "/repo/x/y.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		return fset, []*ast.File{f}
	}
	tests := []struct {
		name, pkg, src string
		want           []string
	}{
		{
			name: "foreign query, method value and SQL",
			pkg:  "internal/inbound",
			src: `package inbound
func f() {
	q.OfferDecline(ctx, id)
	expire := q.OpeningExpire
	_ = expire
	tx.Exec(ctx, ` + "`" + `WITH x AS (UPDATE customers SET name = '' RETURNING id) SELECT 1` + "`" + `)
	q.InboundStoreMany(ctx, args)
}`,
			want: []string{
				"internal/inbound: x/y.go:3 uses OfferDecline, which writes slot_offers, owned by internal/offers",
				"internal/inbound: x/y.go:4 uses OpeningExpire, which writes slot_openings, owned by internal/slots",
				"internal/inbound: x/y.go:6 uses (SQL string), which writes customers, owned by internal/customers",
			},
		},
		{
			name: "an exception holds for its package only",
			pkg:  "internal/offers",
			src:  "package offers\nfunc f() { q.BookingClaim(ctx, p) }",
			want: []string{
				"internal/offers: x/y.go:2 uses BookingClaim, which writes slot_openings, owned by internal/slots",
				"internal/offers: x/y.go:2 uses BookingClaim, which writes bookings, owned by internal/ledger",
			},
		},
		{
			name: "the owner, reads and prose",
			pkg:  "internal/customers",
			src: `package customers
func f() {
	q.CustomerOptOut(ctx, id)
	q.OfferListWave(ctx, p)
	_ = fmt.Errorf("update slot_offers: %w", err)
	tx.Exec(ctx, "SELECT * FROM slot_offers FOR UPDATE")
}`,
		},
		{
			name: "the exception",
			pkg:  "internal/slots",
			src:  "package slots\nfunc f() { q.BookingClaim(ctx, p) }",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset, files := parse(tt.src)
			got := foreignWrites(tt.pkg, fset, files, queries, "/repo", nil)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestWrittenTables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sql  string
		want []string
	}{
		{"INSERT INTO shops (name) VALUES ($1) RETURNING *", []string{"shops"}},
		{"insert into public.customers (x) values (1) on conflict (x) do update set x = 2", []string{"customers"}},
		{"SELECT * FROM bookings WHERE id = $1 FOR UPDATE", nil},
		{"SELECT * FROM slot_offers o FOR UPDATE OF o", nil},
		{"SELECT * FROM slot_offers FOR NO KEY UPDATE", nil},
		{"WITH a AS (UPDATE slot_offers SET status = 'lost') DELETE FROM bookings", []string{"slot_offers", "bookings"}},
		{"UPDATE ONLY slot_openings SET x = 1", []string{"slot_openings"}},
		{"SELECT 'UPDATE customers SET x' -- UPDATE shops\nFROM t", nil},
		{"WITH b AS (INSERT INTO bookings DEFAULT VALUES RETURNING *) SELECT webhook_record(b.shop_id) FROM b", []string{"bookings", "webhook_events"}},
	}
	for _, tt := range tests {
		if got := writtenTables(tt.sql, false); !slices.Equal(got, tt.want) {
			t.Errorf("writtenTables(%q) = %v, want %v", tt.sql, got, tt.want)
		}
	}
	if got := writtenTables("update customers: %w", true); got != nil {
		t.Errorf("upper-case only: %v", got)
	}
}
