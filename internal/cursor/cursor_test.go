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

func TestRankedRoundTripAndRefusals(t *testing.T) {
	t.Parallel()
	at, id := time.Date(2026, 11, 27, 18, 0, 0, 123456000, time.UTC), uuid.New()
	gotAt, rank, gotID, err := cursor.DecodeRanked(cursor.EncodeRanked(at, 1, id))
	require.NoError(t, err)
	require.True(t, at.Equal(gotAt))
	require.EqualValues(t, 1, rank)
	require.Equal(t, id, gotID)
	_, _, _, err = cursor.DecodeRanked(cursor.Encode(at, id))
	require.ErrorIs(t, err, cursor.ErrBad, "a plain cursor is not a ranked one")
	_, _, err = cursor.Decode(cursor.EncodeRanked(at, 0, id))
	require.ErrorIs(t, err, cursor.ErrBad, "a ranked cursor is not a plain one")
	for _, bad := range []string{"", "!!", "bm90IGEgY3Vyc29y", string(make([]byte, 201)), cursor.Encode(at, id) + "x"} {
		_, _, _, err := cursor.DecodeRanked(bad)
		require.ErrorIs(t, err, cursor.ErrBad, "%q", bad)
	}
}
