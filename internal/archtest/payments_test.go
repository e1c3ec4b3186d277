package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestSlotsLeavesPaymentsToTheLedger: slots owns openings and the claim; what happens to
// a booking's payment is internal/ledger's, which imports slots (to change openings
// through it) and makes a new booking's payment link for the YES path (internal/inbound
// asks it with the claim's booking). slots importing the ledger would be a cycle in
// waiting, and slots importing the payment types would put payment decisions back in
// the claim.
func TestSlotsLeavesPaymentsToTheLedger(t *testing.T) {
	t.Parallel()
	forbidden := []string{module + "/internal/ledger", module + "/internal/payments"}
	seen := false
	for _, p := range modulePackages(t) {
		if !within(p.Rel, "internal/slots") {
			continue
		}
		seen = true
		for _, imp := range p.Imports {
			for _, f := range forbidden {
				if importsModule(imp, f) {
					t.Errorf("%s imports %s: a new booking's payment link is inbound's to ask the ledger for", p.Rel, imp)
				}
			}
		}
	}
	if !seen {
		t.Error("internal/slots is not in go list")
	}
}

// providerEventType matches a payment provider's event type name (Stripe's, which
// internal/payments/stripe classifies into payments.EventKind).
var providerEventType = regexp.MustCompile(`\b(checkout\.session|payment_intent|charge|account(\.application)?)\.[a-z_]+\b`)

// providerTypeLiterals returns where a Go file spells a provider's event type in a string.
func providerTypeLiterals(fset *token.FileSet, f *ast.File) []string {
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if m := providerEventType.FindString(s); m != "" {
			pos := fset.Position(lit.Pos())
			found = append(found, fmt.Sprintf("%s:%d spells %q", filepath.Base(pos.Filename), pos.Line, m))
		}
		return true
	})
	return found
}

// TestOnlyTheAdapterSpellsEventTypes: the domain, the neutral payments package and the
// webhook handlers decide on payments.EventKind, never on a provider's event type name;
// only the provider package (internal/payments/stripe) spells them. Tests may (they
// build events).
func TestOnlyTheAdapterSpellsEventTypes(t *testing.T) {
	t.Parallel()
	roots := slices.Concat(inClass(domain), []string{"internal/payments", "internal/webhooks"})
	for _, p := range modulePackages(t) {
		if !within(p.Rel, roots...) || within(p.Rel, "internal/payments/stripe") {
			continue
		}
		for _, name := range p.GoFiles {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("parse %s: %v", name, err)
				continue
			}
			for _, msg := range providerTypeLiterals(fset, f) {
				t.Errorf("%s: %s: classify it in internal/payments/stripe (payments.EventKind)", p.Rel, msg)
			}
		}
	}
}

// TestOnlyTheAdapterSpellsEventTypesCatches shows the rule at work on a made-up file.
func TestOnlyTheAdapterSpellsEventTypesCatches(t *testing.T) {
	t.Parallel()
	src := `package ledger
const expired = "checkout.session.expired"
func f(typ string) bool {
	_ = "a checkout session expired" // prose
	_ = "payments.EventFailed"
	return typ == "payment_intent.payment_failed" || typ == "account.updated"
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/repo/internal/ledger/x.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := providerTypeLiterals(fset, f)
	want := []string{
		`x.go:2 spells "checkout.session.expired"`,
		`x.go:6 spells "payment_intent.payment_failed"`,
		`x.go:6 spells "account.updated"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
