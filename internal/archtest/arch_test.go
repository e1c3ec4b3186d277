// Package archtest keeps the layout true as code is added: every package is in a class
// (domain, domain library, edge, vendor adapter, library, leaf, test helper, tool) and
// imports only what its class may, the domain only downwards in one written order; the
// domain never sees HTTP or a vendor SDK, only the HTTP edges import echo, only the
// vendor adapters import the vendors' SDKs, the test helpers stay out of the server, the
// dashboard leaves River to offers, each table has one writer (tables_test.go) and no
// comment points outside the repository. The package list comes from `go list`, so a new
// package fails until it is classified.
package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/slotrecovery/slotrecovery"

// buildTags are the build tags some of the module's packages need to be listed at all.
const buildTags = "soak"

// goPackage is what `go list -json` says of one package of the module.
type goPackage struct {
	ImportPath   string
	Rel          string `json:"-"` // the import path inside the module: "internal/slots", "cmd/server"
	Dir          string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
}

var listed = sync.OnceValues(func() ([]goPackage, error) {
	// -e: a package that does not build (someone mid-edit) is still listed, so the
	// rules check what they can and the build failure is reported by go test itself.
	// buildTags brings in the commands built only with a tag (cmd/soak).
	out, err := exec.Command("go", "list", "-e", "-tags", buildTags, "-json", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, errors.New(string(ee.Stderr))
		}
		return nil, err
	}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		p.Rel = strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

// modulePackages lists every package of the module, with its non-test imports.
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	pkgs, err := listed()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no package")
	}
	return pkgs
}

// within reports whether rel is one of roots or a package under one of them.
func within(rel string, roots ...string) bool {
	for _, r := range roots {
		if rel == r || strings.HasPrefix(rel, r+"/") {
			return true
		}
	}
	return false
}

// class is what a package is for; it decides what the package may import.
type class string

// The classes. Every package of the module is in exactly one (classes below), so a new
// package fails TestEveryPackageIsClassified until someone decides what it is.
const (
	// domain packages own the rules. They never see HTTP or a vendor SDK, and they import
	// each other only downwards in domainLayers.
	domain class = "domain"
	// domainLib packages are the domain's own libraries: each owns a table (it imports
	// db) and serves the domain, but is not a rule of the product (webhooks sent to
	// shops, idempotency keys, the calendar feed). They stand in domainLayers like the
	// domain, and may use net/http (hooks delivers over HTTP).
	domainLib class = "domain library"
	// edge packages translate HTTP for clients: only they import echo. They may import
	// anything but the tools and the test helpers.
	edge class = "edge"
	// adapter packages are the only importers of a vendor's SDK (vendorAdapters); they
	// import libraries and leaves only.
	adapter class = "vendor adapter"
	// library packages serve any of the above; they import libraries and leaves only.
	library class = "library"
	// leaf packages import nothing of ours: they are small enough to lift out.
	leaf class = "leaf library"
	// testHelper packages give tests real services and fakes; the server never depends on
	// them.
	testHelper class = "test helper"
	// tool packages are the load and soak tools and their harness: clients of the server,
	// not part of it.
	tool class = "tool"
	// check packages hold only tests about the module (this one).
	check class = "check"
)

// classes puts every package of the module in its class, by its path inside the module.
var classes = map[string]class{
	"internal/inbound": domain, "internal/ledger": domain, "internal/delivery": domain,
	"internal/outbox": domain, "internal/slots": domain, "internal/offers": domain,
	"internal/texts": domain, "internal/shops": domain, "internal/inbox": domain,
	"internal/senders": domain, "internal/customers": domain, "internal/erasure": domain,
	"internal/catalog": domain, "internal/book": domain, "internal/join": domain, "internal/stats": domain,

	"internal/hooks": domainLib, "internal/idempotency": domainLib, "internal/calendar": domainLib,
	"internal/paylink": domainLib,

	"cmd/server": edge, "internal/webhooks": edge, "internal/shopapi": edge,
	"internal/httperr": edge, "internal/dashboard": edge, "internal/join/page": edge,

	"internal/sms/twilio": adapter, "internal/payments/stripe": adapter,
	"internal/connectors/calcom": adapter, "internal/connectors/square": adapter, "internal/connectors/ics": adapter,

	"api": library, "internal/config": library, "internal/db": library, "internal/jobs": library,
	"internal/logging": library, "internal/metrics": library, "internal/migrate": library, "internal/retention": library,
	"internal/pacing": library, "internal/payments": library, "internal/pgbatch": library,
	"internal/sms": library, "internal/connectors": library,

	"internal/redislock": leaf, "internal/cooldown": leaf, "internal/phone": leaf, "internal/csvcell": leaf,
	"internal/problem": leaf, "internal/money": leaf, "internal/ratelimit": leaf, "internal/language": leaf, "internal/replies": leaf, "internal/cursor": leaf,
	"internal/keyring": leaf, "internal/pgcode": leaf, "internal/pgvalue": leaf,

	"internal/testkit/pgtest": testHelper, "internal/testkit/redistest": testHelper, "internal/testkit/stripetest": testHelper,
	"internal/testkit/twiliofake": testHelper, "internal/testkit/hookstest": testHelper,
	"internal/testkit/customertest": testHelper,

	"cmd/loadtest": tool, "cmd/soak": tool, "internal/testkit/loadkit": tool,

	"internal/archtest": check,
}

// domainLayers orders the domain (and its libraries), top first: a package imports only
// packages of the layers below its own, never one beside it or above. This is the one
// place the order is written; docs/architecture.md draws it.
var domainLayers = [][]string{
	{"internal/inbound", "internal/erasure", "internal/stats"},  // a reply acts through the owners below; an erasure reaches every copy; the figures read every record
	{"internal/book", "internal/join"},                          // the appointment book (a YES booking's move-up moves its payment through the ledger); joining and the consent record
	{"internal/ledger", "internal/outbox", "internal/delivery"}, // payments of bookings; transactional texts; delivery reports
	{"internal/slots"},                       // openings and the claim
	{"internal/offers", "internal/calendar"}, // the waves of offers; the shops' feed
	{"internal/senders"},                     // each shop's own sender and its A2P registration
	{"internal/texts"},                       // the wording of every text
	{"internal/customers"},                   // the shops' customers, their consent and their import
	{"internal/shops"},                       // the shops themselves
	{"internal/inbox"},                       // the owner's conversations
	{"internal/hooks", "internal/idempotency", "internal/catalog", "internal/paylink"}, // catalog: staff and services; paylink: short payment links
}

// mayImport lists, for each class, the classes of ours it may import. domain and
// domainLib imports between themselves are further held to domainLayers.
var mayImport = map[class][]class{
	domain:     {domain, domainLib, library, leaf},
	domainLib:  {domain, domainLib, library, leaf},
	edge:       {edge, domain, domainLib, adapter, library, leaf},
	adapter:    {library, leaf},
	library:    {library, leaf},
	leaf:       {},
	testHelper: {testHelper, domain, domainLib, adapter, library, leaf},
	tool:       {tool, testHelper, adapter, library, leaf},
	check:      {},
}

// vendorAdapters are the only packages that import each vendor's SDK.
var vendorAdapters = map[string]string{
	"github.com/twilio/twilio-go": "internal/sms/twilio",
	"github.com/stripe/stripe-go": "internal/payments/stripe",
}

// inClass returns the packages classes puts in c.
func inClass(c class) []string {
	var out []string
	for rel, k := range classes {
		if k == c {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// layer returns rel's index in domainLayers, or -1.
func layer(rel string) int {
	for i, l := range domainLayers {
		if slices.Contains(l, rel) {
			return i
		}
	}
	return -1
}

// howToClassify is what a failure says about a package that is in no class.
const howToClassify = "add it to classes in internal/archtest/arch_test.go: domain if it owns " +
	"rules of the product, domain library if it owns a table that serves the domain (both also " +
	"go in a layer of domainLayers: below what imports it, above what it imports), edge if it " +
	"answers HTTP for clients, vendor adapter if it wraps a vendor's SDK, library if it serves " +
	"all of these, leaf library if it imports nothing of ours, test helper, or tool"

// importViolations checks every package's imports of ours against its class and, inside
// the domain, against domainLayers; it returns one line per package not classified and
// per import not allowed.
func importViolations(pkgs []goPackage) []string {
	var out []string
	for _, p := range pkgs {
		from, ok := classes[p.Rel]
		if !ok {
			out = append(out, fmt.Sprintf("%s is in no class: %s", p.Rel, howToClassify))
			continue
		}
		layered := from == domain || from == domainLib
		if layered && layer(p.Rel) < 0 {
			out = append(out, fmt.Sprintf("%s is a %s in no layer: add it to domainLayers in internal/archtest/arch_test.go", p.Rel, from))
		}
		for _, imp := range p.Imports {
			if !importsModule(imp, module) {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			to, ok := classes[rel]
			if !ok {
				continue // reported as unclassified where it is listed itself
			}
			if !slices.Contains(mayImport[from], to) {
				out = append(out, fmt.Sprintf("%s (%s) imports %s (%s): a %s may import only %v",
					p.Rel, from, rel, to, from, mayImport[from]))
				continue
			}
			if !layered || (to != domain && to != domainLib) {
				continue
			}
			if lf, lt := layer(p.Rel), layer(rel); lf >= 0 && lt >= 0 && lt <= lf {
				where := "above"
				if lt == lf {
					where = "beside"
				}
				out = append(out, fmt.Sprintf("%s imports %s, which stands %s it in domainLayers: the domain "+
					"imports only downwards (ask through an interface the upper package implements, or move the rule down)",
					p.Rel, rel, where))
			}
		}
	}
	return out
}

// TestEveryPackageIsClassified: each package of the module is in a class, and imports
// only what its class may (mayImport), the domain only downwards (domainLayers).
func TestEveryPackageIsClassified(t *testing.T) {
	t.Parallel()
	for _, v := range importViolations(modulePackages(t)) {
		t.Error(v)
	}
}

// TestEveryPackageIsClassifiedCatches shows the check at work on made-up packages.
func TestEveryPackageIsClassifiedCatches(t *testing.T) {
	t.Parallel()
	pkg := func(rel string, imports ...string) goPackage {
		p := goPackage{Rel: rel}
		for _, imp := range imports {
			p.Imports = append(p.Imports, module+"/"+imp)
		}
		return p
	}
	got := importViolations([]goPackage{
		pkg("internal/newthing", "internal/db"),
		pkg("internal/slots", "internal/ledger", "internal/offers", "internal/sms/twilio"),
		pkg("internal/ledger", "internal/outbox", "internal/slots"),
		pkg("internal/phone", "internal/problem"),
		pkg("internal/jobs", "internal/shops"),
		pkg("internal/dashboard", "internal/testkit/twiliofake", "internal/slots"),
	})
	want := []string{
		"internal/newthing is in no class",
		"internal/slots imports internal/ledger, which stands above it",
		"internal/slots (domain) imports internal/sms/twilio (vendor adapter)",
		"internal/ledger imports internal/outbox, which stands beside it",
		"internal/phone (leaf library) imports internal/problem (leaf library)",
		"internal/jobs (library) imports internal/shops (domain)",
		"internal/dashboard (edge) imports internal/testkit/twiliofake (test helper)",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d: got %q, want it to start with %q", i, got[i], want[i])
		}
	}
}

// importsModule reports whether imp is path or a package under it (path "a/b" matches
// "a/b" and "a/b/v2/c", not "a/bc").
func importsModule(imp, path string) bool {
	return imp == path || strings.HasPrefix(imp, path+"/")
}

func TestDomainSeesNoHTTPOrVendorSDK(t *testing.T) {
	t.Parallel()
	forbidden := []string{"net/http", "github.com/labstack/echo", "github.com/twilio/twilio-go", "github.com/stripe/stripe-go"}
	for _, p := range modulePackages(t) {
		if classes[p.Rel] != domain {
			continue
		}
		for _, imp := range p.Imports {
			for _, f := range forbidden {
				if importsModule(imp, f) {
					t.Errorf("%s imports %s: the domain declares small interfaces instead", p.Rel, imp)
				}
			}
		}
	}
}

func TestOnlyEdgesImportEcho(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		if classes[p.Rel] == edge {
			continue
		}
		for _, imp := range p.Imports {
			if importsModule(imp, "github.com/labstack/echo") || importsModule(imp, "github.com/labstack/echo-contrib") {
				t.Errorf("%s imports %s; only the edges %v may", p.Rel, imp, inClass(edge))
			}
		}
	}
}

// TestNoTemplates: no package of ours executes a text or HTML template. A template's
// executor looks methods up by name at run time (reflect's MethodByName), and the linker
// then keeps every exported method of every type: one html/template page (the join
// page's first version) made the server's binary 43 % larger and each instance's peak
// RSS about 7 MiB higher. Pages are gomponents values; texts are catalogues.
func TestNoTemplates(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		for _, imp := range p.Imports {
			if imp == "html/template" || imp == "text/template" {
				t.Errorf("%s imports %s: build the page with gomponents (see internal/dashboard/page.go)", p.Rel, imp)
			}
		}
	}
}

// TestOnlyAdaptersImportVendorSDKs keeps each vendor's words in one package: the rest
// speaks the neutral types of internal/sms and internal/payments. Tests may use an SDK
// (to sign a webhook, say); only non-test imports count.
func TestOnlyAdaptersImportVendorSDKs(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		for _, imp := range p.Imports {
			for sdk, adapter := range vendorAdapters {
				if importsModule(imp, sdk) && p.Rel != adapter {
					t.Errorf("%s imports %s; only %s may", p.Rel, imp, adapter)
				}
			}
		}
	}
}

// TestDomainDoesNotReachVendorSDKs follows every import, not only direct ones: the
// domain speaks the vendor-neutral types of internal/sms and internal/payments, and only
// internal/sms/twilio imports twilio-go and only internal/payments/stripe imports
// stripe-go.
func TestDomainDoesNotReachVendorSDKs(t *testing.T) {
	t.Parallel()
	args := []string{"list", "-e", "-deps"}
	for _, p := range modulePackages(t) {
		if classes[p.Rel] == domain {
			args = append(args, p.ImportPath)
		}
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"github.com/labstack/echo", "github.com/twilio/twilio-go", "github.com/stripe/stripe-go"} {
			if importsModule(dep, f) {
				t.Errorf("the domain reaches %s", dep)
			}
		}
	}
}

func TestClassesNameRealPackages(t *testing.T) {
	t.Parallel()
	var rels []string
	for _, p := range modulePackages(t) {
		rels = append(rels, p.Rel)
	}
	for rel := range classes {
		if !slices.Contains(rels, rel) {
			t.Errorf("%s is classified but not in go list: update classes", rel)
		}
	}
	for _, l := range domainLayers {
		for _, rel := range l {
			if c := classes[rel]; c != domain && c != domainLib {
				t.Errorf("%s is in domainLayers but classed %q: only the domain and its libraries are layered", rel, c)
			}
		}
	}
	for sdk, rel := range vendorAdapters {
		if classes[rel] != adapter {
			t.Errorf("%s, the adapter of %s, is not classed a vendor adapter", rel, sdk)
		}
	}
}

// TestDashboardDoesNotImportRiver: the offer waves are offers' River jobs, and only
// offers knows their arguments; the dashboard asks offers.WaveSchedule when the next is
// due. (Its tests may insert jobs to set a scene.)
func TestDashboardDoesNotImportRiver(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		if !within(p.Rel, "internal/dashboard") {
			continue
		}
		for _, imp := range p.Imports {
			if importsModule(imp, "github.com/riverqueue/river") {
				t.Errorf("%s imports %s: ask offers.WaveSchedule about the waves instead", p.Rel, imp)
			}
		}
	}
}

// TestTestHelpersStayOutOfTheServer: nothing the server is built from imports a test
// helper, so no fake can answer in production. The load and soak tools may use them.
func TestTestHelpersStayOutOfTheServer(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-e", "-deps", module+"/cmd/server").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, h := range inClass(testHelper) {
			if dep == module+"/"+h {
				t.Errorf("cmd/server depends on %s, a test helper", h)
			}
		}
	}
}
