package cursor_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/cursor"
)

func TestRoundTripAndRefusals(t *testing.T) {
	t.Parallel()
	at, id := time.Date(2026, 11, 27, 18, 0, 0, 123456789, time.UTC), uuid.New()
	gotAt, gotID, err := cursor.Decode(cursor.Encode(at, id))
	require.NoError(t, err)
	require.True(t, at.Equal(gotAt))
	require.Equal(t, id, gotID)
	for _, bad := range []string{"", "!!", "bm90IGEgY3Vyc29y", string(make([]byte, 201))} {
		_, _, err := cursor.Decode(bad)
		require.ErrorIs(t, err, cursor.ErrBad, "%q", bad)
	}
}
