package redistest_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func TestCountRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client, prefix := redistest.New(t)
	rt := redistest.CountRoundTrips(t, client)
	require.Zero(t, rt.Calls(), "the warm-up is not counted")
	require.Zero(t, rt.Dials())

	require.NoError(t, client.Set(ctx, prefix+"a", "1", time.Minute).Err())
	require.NoError(t, client.Get(ctx, prefix+"a").Err())
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, prefix+"a")
		p.Exists(ctx, prefix+"b")
		p.TTL(ctx, prefix+"a")
		return nil
	})
	require.NoError(t, err)
	require.EqualValues(t, 3, rt.Calls(), "two commands alone and one pipeline")
	require.EqualValues(t, 3, rt.Pipelined(), "the pipeline's commands")
	require.Zero(t, rt.Dials(), "the warmed-up pools serve both")

	rt.Reset()
	require.Zero(t, rt.Calls())
	require.Zero(t, rt.Pipelined())
}
