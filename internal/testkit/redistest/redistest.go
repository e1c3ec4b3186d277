package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// DefaultURL is the Redis that tests use when TEST_REDIS_URL is not set.
const DefaultURL = "redis://127.0.0.1:6379/0"

// StartHint says how to start a Redis that the tests can use.
const StartHint = `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`

// cleanupTimeout bounds the key deletion at the end of a test, which runs after
// the test's own context is gone.
const cleanupTimeout = 10 * time.Second

// URL returns TEST_REDIS_URL, or DefaultURL when it is unset.
func URL() string {
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// New returns a client for URL() and a key prefix ("test:<random hex>:") that
// belongs to this test alone. At cleanup it deletes every key under the prefix
// and closes the client. If Redis cannot be reached the test fails with a
// message that says how to start it.
func New(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	opt, err := redis.ParseURL(URL())
	if err != nil {
		t.Fatalf("redistest: parse TEST_REDIS_URL %q: %v", URL(), err)
	}
	quiet(opt)
	client := redis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("redistest: redis at %s is unreachable (%v); start one with\n\t%s\nor point TEST_REDIS_URL at another", URL(), err, StartHint)
	}
	return client, Prefix(t, client)
}

// Prefix returns a fresh key prefix ("test:<random hex>:") for this test and
// deletes every key under it from client at cleanup. Use it to give a test its
// own keys on a client that is shared, such as the one from Cluster. Call it
// after the call that made client: cleanups run last-in first-out, so the keys
// are deleted before the client is closed.
func Prefix(t testing.TB, client redis.UniversalClient) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails.
	prefix := "test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := DeletePrefix(ctx, client, prefix); err != nil {
			t.Errorf("redistest: delete keys %s*: %v", prefix, err)
		}
	})
	return prefix
}

// DeletePrefix deletes every key that starts with prefix, on every master when
// client is a *redis.ClusterClient. The prefix must not contain glob
// characters (*, ?, [ or \).
func DeletePrefix(ctx context.Context, client redis.UniversalClient, prefix string) error {
	var keys []string
	scan := func(ctx context.Context, node redis.UniversalClient) ([]string, error) {
		var found []string
		iter := node.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			found = append(found, iter.Val())
		}
		return found, iter.Err()
	}
	if cc, ok := client.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			found, err := scan(ctx, node)
			mu.Lock()
			keys = append(keys, found...)
			mu.Unlock()
			return err
		})
		if err != nil {
			return fmt.Errorf("scan %s*: %w", prefix, err)
		}
	} else {
		found, err := scan(ctx, client)
		if err != nil {
			return fmt.Errorf("scan %s*: %w", prefix, err)
		}
		keys = found
	}
	if len(keys) == 0 {
		return nil
	}
	// One UNLINK per key: keys under one prefix hash to many cluster slots, and
	// a multi-key UNLINK across slots fails with CROSSSLOT.
	pipe := client.Pipeline()
	for _, k := range keys {
		pipe.Unlink(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("unlink %d keys under %s: %w", len(keys), prefix, err)
	}
	return nil
}

// Unreachable returns a client for a loopback port that nothing listens on,
// with short timeouts and no retries, so that every command fails fast with
// a connection error. Use it to check that code fails closed.
func Unreachable(t testing.TB) redis.UniversalClient {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: find a free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	opt := &redis.Options{
		Addr:          addr,
		DialTimeout:   200 * time.Millisecond,
		DialerRetries: 1,
		ReadTimeout:   200 * time.Millisecond,
		WriteTimeout:  200 * time.Millisecond,
		PoolTimeout:   200 * time.Millisecond,
		MaxRetries:    -1,
	}
	quiet(opt)
	client := redis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// quiet turns off the handshakes that old servers answer with an error (CLIENT
// SETINFO before Redis 7.2, CLIENT MAINT_NOTIFICATIONS outside Redis Cloud),
// which only add a round trip to every new connection in tests.
func quiet(opt *redis.Options) {
	opt.DisableIdentity = true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}
