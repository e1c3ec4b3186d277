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
