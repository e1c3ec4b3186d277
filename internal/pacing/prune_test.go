package pacing

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// TestPacerForgetsSendersWithNothingWaiting: a sender's turn lives only while texts of
// it wait in this instance, also when a wait gives up with its context, so an instance
// that paces many shops' numbers over months does not keep one for each.
func TestPacerForgetsSendersWithNothingWaiting(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	p := New(rdb, prefix)
	ctx := context.Background()

	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			assert.NoError(t, p.Wait(ctx, fmt.Sprintf("+1555000%04d", i%25), 1000))
		})
	}
	wg.Wait()
	require.Equal(t, 0, p.senders(), "every sender's texts went out")

	// A 1/s sender that just sent: the next wait holds the turn, one behind it waits for
	// the turn; both give up.
	const slow = "+15550009999"
	require.NoError(t, p.Wait(ctx, slow, 1))
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- p.Wait(short, slow, 1) }()
	}
	require.ErrorIs(t, <-errs, context.DeadlineExceeded)
	require.ErrorIs(t, <-errs, context.DeadlineExceeded)
	require.Equal(t, 0, p.senders(), "waits that gave up left nothing behind")
}
