// Package archtest keeps the dependency direction of DESIGN §2 and STYLE.md: the domain
// never sees HTTP or a vendor SDK, and the small Redis libraries import nothing of ours.
package archtest

import (
	"go/build"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/slotrecovery/slotrecovery/"

func imports(t *testing.T, pkg string) []string {
	t.Helper()
	p, err := build.Import(module+pkg, "", 0)
	if err != nil {
		t.Fatalf("import %s: %v", pkg, err)
	}
	return p.Imports
}

func TestDomainSeesNoHTTPOrVendorSDK(t *testing.T) {
	t.Parallel()
	forbidden := []string{"net/http", "github.com/labstack/echo", "github.com/twilio/twilio-go", "github.com/stripe/stripe-go"}
	for _, pkg := range []string{"internal/slots", "internal/offers", "internal/inbound", "internal/shops"} {
		for _, imp := range imports(t, pkg) {
			for _, f := range forbidden {
				if imp == f || strings.HasPrefix(imp, f+"/") {
					t.Errorf("%s imports %s: the domain declares small interfaces instead", pkg, imp)
				}
			}
		}
	}
}

func TestLeafLibrariesImportNothingOfOurs(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"internal/redislock", "internal/cooldown", "internal/phone", "internal/problem"} {
		for _, imp := range imports(t, pkg) {
			if strings.HasPrefix(imp, module) {
				t.Errorf("%s imports %s: it must stay a leaf library", pkg, imp)
			}
		}
	}
}

func TestOnlyEdgesImportEcho(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"cmd/server": true, "internal/webhooks": true, "internal/shopapi": true, "internal/httperr": true, "internal/dashboard": true}
	for _, pkg := range []string{"internal/slots", "internal/offers", "internal/shops", "internal/jobs", "internal/payments", "internal/payments/stripe", "internal/sms", "internal/config", "internal/migrate", "internal/metrics", "internal/logging"} {
		if allowed[pkg] {
			continue
		}
		for _, imp := range imports(t, pkg) {
			if strings.HasPrefix(imp, "github.com/labstack/echo") {
				t.Errorf("%s imports echo; only cmd/server and the HTTP packages may", pkg)
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
	out, err := exec.Command("go", "list", "-deps", module+"internal/slots", module+"internal/offers", module+"internal/inbound", module+"internal/shops").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"github.com/labstack/echo", "github.com/twilio/twilio-go", "github.com/stripe/stripe-go"} {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("the domain reaches %s", dep)
			}
		}
	}
}
