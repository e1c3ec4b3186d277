// Package archtest keeps the layout true as code is added: the domain never sees HTTP
// or a vendor SDK, only the HTTP edges import echo, only the vendor adapters import the
// vendors' SDKs, the small libraries import nothing of ours, the test helpers stay out
// of the server, the dashboard leaves River to offers, each table has one writer
// (tables_test.go) and no comment points outside the repository. The package lists come
// from `go list`, so a new package is checked by the rule of its class the day it is
// added.
package archtest

import (
	"encoding/json"
	"errors"
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

// The classes of packages. A package that is in none of them is a plain library: it may
// import our other libraries and the domain, but not echo or a vendor SDK.
var (
	// domainRoots are the packages that own the rules (and their subpackages).
	domainRoots = []string{"internal/slots", "internal/ledger", "internal/offers", "internal/inbound", "internal/shops"}
	// edgeRoots translate HTTP: only they import echo. Every command is an edge.
	edgeRoots = []string{"cmd", "internal/webhooks", "internal/shopapi", "internal/httperr", "internal/dashboard"}
	// vendorAdapters are the only packages that import each vendor's SDK.
	vendorAdapters = map[string]string{
		"github.com/twilio/twilio-go": "internal/sms/twilio",
		"github.com/stripe/stripe-go": "internal/payments/stripe",
	}
	// testHelpers give tests real services and fakes; the server never depends on them.
	testHelpers = []string{"internal/pgtest", "internal/redistest", "internal/stripetest", "internal/twiliofake"}
	// leafLibraries import nothing of ours: they are small enough to lift out.
	leafLibraries = []string{"internal/redislock", "internal/cooldown", "internal/phone", "internal/problem", "internal/money"}
)

// importsModule reports whether imp is path or a package under it (path "a/b" matches
// "a/b" and "a/b/v2/c", not "a/bc").
func importsModule(imp, path string) bool {
	return imp == path || strings.HasPrefix(imp, path+"/")
}

func TestDomainSeesNoHTTPOrVendorSDK(t *testing.T) {
	t.Parallel()
	forbidden := []string{"net/http", "github.com/labstack/echo", "github.com/twilio/twilio-go", "github.com/stripe/stripe-go"}
	seen := 0
	for _, p := range modulePackages(t) {
		if !within(p.Rel, domainRoots...) {
			continue
		}
		seen++
		for _, imp := range p.Imports {
			for _, f := range forbidden {
				if importsModule(imp, f) {
					t.Errorf("%s imports %s: the domain declares small interfaces instead", p.Rel, imp)
				}
			}
		}
	}
	if seen < len(domainRoots) {
		t.Errorf("found %d of the %d domain packages %v: update domainRoots", seen, len(domainRoots), domainRoots)
	}
}

func TestLeafLibrariesImportNothingOfOurs(t *testing.T) {
	t.Parallel()
	byRel := map[string]goPackage{}
	for _, p := range modulePackages(t) {
		byRel[p.Rel] = p
	}
	for _, rel := range leafLibraries {
		p, ok := byRel[rel]
		if !ok {
			t.Errorf("leaf library %s is not in go list: update leafLibraries", rel)
			continue
		}
		for _, imp := range p.Imports {
			if importsModule(imp, module) {
				t.Errorf("%s imports %s: it must stay a leaf library", rel, imp)
			}
		}
	}
}

func TestOnlyEdgesImportEcho(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		if within(p.Rel, edgeRoots...) {
			continue
		}
		for _, imp := range p.Imports {
			if importsModule(imp, "github.com/labstack/echo") || importsModule(imp, "github.com/labstack/echo-contrib") {
				t.Errorf("%s imports %s; only the edges %v may", p.Rel, imp, edgeRoots)
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
		if within(p.Rel, domainRoots...) {
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
	for _, h := range testHelpers {
		if !slices.Contains(rels, h) {
			t.Errorf("test helper %s is not in go list: update testHelpers", h)
		}
	}
	for _, adapter := range vendorAdapters {
		if !slices.Contains(rels, adapter) {
			t.Errorf("vendor adapter %s is not in go list: update vendorAdapters", adapter)
		}
	}
	for _, e := range edgeRoots {
		if !slices.ContainsFunc(rels, func(rel string) bool { return within(rel, e) }) {
			t.Errorf("edge %s is not in go list: update edgeRoots", e)
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
		for _, h := range testHelpers {
			if dep == module+"/"+h {
				t.Errorf("cmd/server depends on %s, a test helper", h)
			}
		}
	}
}
