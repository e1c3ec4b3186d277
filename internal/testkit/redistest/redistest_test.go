package redistest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

func TestURL(t *testing.T) {
	t.Setenv("TEST_REDIS_URL", "")
	require.Equal(t, redistest.DefaultURL, redistest.URL())
	t.Setenv("TEST_REDIS_URL", "redis://127.0.0.1:6390/3")
	require.Equal(t, "redis://127.0.0.1:6390/3", redistest.URL())
}

func TestNew(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client, prefix := redistest.New(t)
	require.Regexp(t, `^test:[0-9a-f]{16}:$`, prefix)
	require.NoError(t, client.Set(ctx, prefix+"k", "v", time.Minute).Err())
	require.Equal(t, "v", client.Get(ctx, prefix+"k").Val())

	_, other := redistest.New(t)
	require.NotEqual(t, prefix, other, "every call gets its own prefix")
}

// TestPrefixCleanup checks that a test's keys, and only its keys, are gone
// once the test ends.
func TestPrefixCleanup(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	watcher, outside := redistest.New(t)
	require.NoError(t, watcher.Set(ctx, outside+"keep", "1", time.Minute).Err())

	var prefix string
	t.Run("writer", func(t *testing.T) {
		client, p := redistest.New(t)
		prefix = p
		pipe := client.Pipeline()
		for i := range 2500 { // more than one SCAN page
			pipe.Set(ctx, fmt.Sprintf("%s%d", p, i), "x", time.Minute)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	})

	keys, _, err := watcher.Scan(ctx, 0, prefix+"*", 10000).Result()
	require.NoError(t, err)
	n := len(keys)
	iter := watcher.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	require.NoError(t, iter.Err())
	require.Zero(t, n, "keys under %s left behind", prefix)
	require.Equal(t, "1", watcher.Get(ctx, outside+"keep").Val(), "a key of another prefix was deleted")
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	client := redistest.Unreachable(t)
	start := time.Now()
	err := client.Ping(t.Context()).Err()
	require.Error(t, err)
	require.Less(t, time.Since(start), 2*time.Second, "an unreachable client must fail fast")
}

func TestCluster(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client := redistest.Cluster(t)
	prefix := redistest.Prefix(t, client)

	cc, ok := client.(*redis.ClusterClient)
	require.True(t, ok, "Cluster returns a *redis.ClusterClient, got %T", client)
	info, err := cc.ClusterInfo(ctx).Result()
	require.NoError(t, err)
	require.Contains(t, info, "cluster_state:ok")
	require.Contains(t, info, "cluster_known_nodes:3")

	// Keys under one prefix spread over all three masters, and one pipeline
	// can write them all without CROSSSLOT.
	pipe := client.Pipeline()
	for i := range 300 {
		pipe.Set(ctx, fmt.Sprintf("%s%d", prefix, i), i, time.Minute)
	}
	_, err = pipe.Exec(ctx)
	require.NoError(t, err)

	// Each master got some of them.
	var mu sync.Mutex
	perMaster := map[string]int{}
	require.NoError(t, cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		keys, _, err := node.Scan(ctx, 0, prefix+"*", 1000).Result()
		mu.Lock()
		defer mu.Unlock()
		perMaster[node.Options().Addr] = len(keys)
		return err
	}))
	require.Len(t, perMaster, 3)
	for addr, n := range perMaster {
		require.Positive(t, n, "master %s holds none of the keys", addr)
	}

	// Deleting a prefix works across the masters.
	require.NoError(t, redistest.DeletePrefix(ctx, client, prefix))
	var left int
	for i := range 300 {
		left += int(client.Exists(ctx, fmt.Sprintf("%s%d", prefix, i)).Val())
	}
	require.Zero(t, left)
}

// TestClusterShared checks that tests running at the same time share one
// cluster instead of starting one each.
func TestClusterShared(t *testing.T) {
	t.Parallel()
	masters := make(chan string, 2)
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b"} {
			t.Run(name, func(t *testing.T) {
				client := redistest.Cluster(t) // before t.Parallel, so both hold it at once
				t.Parallel()
				var mu sync.Mutex
				var addrs []string
				require.NoError(t, client.(*redis.ClusterClient).ForEachMaster(t.Context(), func(ctx context.Context, node *redis.Client) error {
					mu.Lock()
					defer mu.Unlock()
					addrs = append(addrs, node.Options().Addr)
					return nil
				}))
				slices.Sort(addrs)
				masters <- strings.Join(addrs, ",")
			})
		}
	})
	require.Equal(t, <-masters, <-masters, "parallel tests got different clusters")
}
