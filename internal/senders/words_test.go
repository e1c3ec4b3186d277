package senders_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSendersSpeaksNoTrustHub: the package speaks of businesses, brands, campaigns and
// numbers; TrustHub's policies, bundles and end users, and the provider's status and use
// case words, are the Twilio adapter's (internal/sms/twilio, a2p.go). Its tests may see
// them through the fake.
func TestSendersSpeaksNoTrustHub(t *testing.T) {
	t.Parallel()
	vendor := regexp.MustCompile(`RN[0-9a-f]{32}|TrustHub|"customer_profile|"trust_product|end_user|EndUser|Bundle|` +
		`"(APPROVED|VERIFIED|FAILED|PENDING|IN_PROGRESS|CUSTOMER_CARE|SOLE_PROPRIETOR|STANDARD)"`)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(src), "\n") {
			if m := vendor.FindString(line); m != "" {
				t.Errorf("%s:%d spells %q, a word of the provider's: it belongs in internal/sms/twilio", f, i+1, m)
			}
		}
		checked++
	}
	require.Positive(t, checked)
}
