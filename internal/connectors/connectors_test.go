package connectors_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
)

func TestConnectorsVocabulary(t *testing.T) {
	t.Parallel()
	for _, s := range connectors.Statuses {
		require.True(t, s.Valid())
	}
	require.False(t, connectors.Status("CANCELLED_BY_SELLER").Valid())
	require.True(t, connectors.StatusCancelled.Frees())
	require.True(t, connectors.StatusMoved.Frees())
	require.False(t, connectors.StatusNoShow.Frees(), "a no-show's time has passed: nothing to offer")
	require.False(t, connectors.Source("google").Valid())
}

// TestVendorErrorPermanent: a refused key, a booking gone or a request refused as it
// stands cannot be cured by retrying; an outage, a rate limit or a conflict can.
func TestVendorErrorPermanent(t *testing.T) {
	t.Parallel()
	for status, permanent := range map[int]bool{400: true, 401: true, 403: true, 404: true, 410: true, 422: true,
		409: false, 429: false, 500: false, 502: false, 503: false} {
		e := &connectors.VendorError{Vendor: "cal.com", Status: status}
		require.Equal(t, permanent, e.Permanent(), "%d", status)
	}
	require.True(t, (&connectors.VendorError{Vendor: "Square", Status: 409, Final: true}).Permanent())
	require.Equal(t, "Square answered 401 UNAUTHORIZED: This request could not be authorized.",
		(&connectors.VendorError{Vendor: "Square", Status: 401, Code: "UNAUTHORIZED", Message: "This request could not be authorized."}).Error())
}
