package slots_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestPlainLeavesMoveUpsOut: a plain YES books only plain offers, in their order, and
// copies nothing when there is no move-up among them.
func TestPlainLeavesMoveUpsOut(t *testing.T) {
	t.Parallel()
	mv := uuid.NullUUID{UUID: uuid.New(), Valid: true}
	a, b, c, d := slots.LiveOffer{OfferID: uuid.New()}, slots.LiveOffer{OfferID: uuid.New(), MoveFrom: mv},
		slots.LiveOffer{OfferID: uuid.New()}, slots.LiveOffer{OfferID: uuid.New(), MoveFrom: mv}
	require.Equal(t, []slots.LiveOffer{a, c}, slots.Plain([]slots.LiveOffer{a, b, c, d}))
	require.Equal(t, []slots.LiveOffer{a, c}, slots.Plain([]slots.LiveOffer{b, a, d, c}))
	require.Empty(t, slots.Plain([]slots.LiveOffer{b, d}))
	plain := []slots.LiveOffer{a, c}
	got := slots.Plain(plain)
	require.Equal(t, plain, got)
	require.Same(t, &plain[0], &got[0], "no copy without a move-up")
}
