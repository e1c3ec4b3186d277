package cooldown_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/cooldown"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// backends are the Redis deployments the suite runs on.
var backends = []struct {
	name   string
	client func(t *testing.T) (redis.UniversalClient, string)
}{
	{"single", func(t *testing.T) (redis.UniversalClient, string) { return redistest.New(t) }},
	{"cluster", func(t *testing.T) (redis.UniversalClient, string) {
		rdb := redistest.Cluster(t)
		return rdb, redistest.Prefix(t, rdb)
	}},
}

func newStore(t testing.TB, rdb redis.UniversalClient, prefix string) *cooldown.Store {
	t.Helper()
	s, err := cooldown.New(rdb, cooldown.Config{Prefix: prefix})
	require.NoError(t, err)
	return s
}

// TestStore runs every case on a single Redis and on a three-master cluster.
func TestStore(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, rdb redis.UniversalClient, s *cooldown.Store)
	}{
		{"StartCooling", testStartCooling},
		{"DefaultDuration", testDefaultDuration},
		{"Expiry", testExpiry},
		{"RestartReplacesRemaining", testRestart},
		{"TenThousandIDs", testTenThousand},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rdb, prefix := b.client(t)
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, rdb, newStore(t, rdb, prefix+c.name+":"))
				})
			}
		})
	}
}

// remaining is how long id's key has left in Redis: 0 when there is no key, negative
// when the key has no expiry.
func remaining(t *testing.T, rdb redis.UniversalClient, s *cooldown.Store, id string) time.Duration {
	t.Helper()
	d, err := rdb.PTTL(t.Context(), s.Key(id)).Result()
	require.NoError(t, err)
	if d == -2 { // go-redis passes PTTL's "no key" through as is
		return 0
	}
	return d
}

func testStartCooling(t *testing.T, rdb redis.UniversalClient, s *cooldown.Store) {
	ctx := t.Context()
	require.NoError(t, s.Start(ctx, "42", 10*time.Second))
	require.Equal(t, "1", rdb.Get(ctx, s.Key("42")).Val())

	got, err := s.Cooling(ctx, []string{"42", "43"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"42": true, "43": false}, got)

	left := remaining(t, rdb, s, "42")
	require.Positive(t, left, "the key expires")
	require.LessOrEqual(t, left, 10*time.Second)
	require.Zero(t, remaining(t, rdb, s, "43"))

	require.Error(t, s.Start(ctx, "", time.Second))
}

func testDefaultDuration(t *testing.T, rdb redis.UniversalClient, s *cooldown.Store) {
	ctx := t.Context()
	for _, d := range []time.Duration{0, -time.Second} {
		require.NoError(t, s.Start(ctx, "42", d))
		left := remaining(t, rdb, s, "42")
		require.Greater(t, left, cooldown.DefaultDuration-time.Minute, "d=%s", d)
		require.LessOrEqual(t, left, cooldown.DefaultDuration)
	}

	short, err := cooldown.New(rdb, cooldown.Config{Prefix: s.Key("short:"), Default: time.Minute})
	require.NoError(t, err)
	require.NoError(t, short.Start(ctx, "42", 0))
	left := remaining(t, rdb, short, "42")
	require.Greater(t, left, 59*time.Second)
	require.LessOrEqual(t, left, time.Minute)
}

func testExpiry(t *testing.T, rdb redis.UniversalClient, s *cooldown.Store) {
	ctx := t.Context()
	// A second, so that a loaded machine still asks before it runs out.
	require.NoError(t, s.Start(ctx, "42", time.Second))
	got, err := s.Cooling(ctx, []string{"42"})
	require.NoError(t, err)
	require.True(t, got["42"])

	require.Eventually(t, func() bool {
		got, err := s.Cooling(ctx, []string{"42"})
		return err == nil && !got["42"]
	}, 30*time.Second, 10*time.Millisecond, "the cooldown never expired")
	require.Zero(t, remaining(t, rdb, s, "42"), "the key is gone")
}

func testRestart(t *testing.T, rdb redis.UniversalClient, s *cooldown.Store) {
	ctx := t.Context()
	require.NoError(t, s.Start(ctx, "42", time.Hour))
	require.NoError(t, s.Start(ctx, "42", time.Minute))
	left := remaining(t, rdb, s, "42")
	require.Greater(t, left, 59*time.Second, "the new minute, not what was left of it")
	require.LessOrEqual(t, left, time.Minute)
}

// testTenThousand checks 10,000 ids in one call, about half of them cooling
// down, with duplicates thrown in.
func testTenThousand(t *testing.T, rdb redis.UniversalClient, s *cooldown.Store) {
	ctx := t.Context()
	const n = 10_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	pipe := rdb.Pipeline()
	for i := 0; i < n; i += 2 { // even ids cool down
		pipe.Set(ctx, s.Key(ids[i]), "1", time.Minute)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)

	got, err := s.Cooling(ctx, append(ids, "0", "1"))
	require.NoError(t, err)
	require.Len(t, got, n)
	for i, id := range ids {
		require.Equal(t, i%2 == 0, got[id], "id %s", id)
	}
}

// TestCoolingOneRoundTrip proves with a hook that Cooling sends one pipeline,
// and nothing else, for 10,000 ids on a single Redis, and nothing at all for
// none.
func TestCoolingOneRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rdb, prefix := redistest.New(t)
	s := newStore(t, rdb, prefix)
	for i := 0; i < 10_000; i += 2 {
		require.NoError(t, s.Start(ctx, strconv.Itoa(i), time.Minute))
	}
	ids := make([]string, 10_000)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}

	h := redistest.CountRoundTrips(t, rdb)

	got, err := s.Cooling(ctx, nil)
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)
	got, err = s.Cooling(ctx, []string{})
	require.NoError(t, err)
	require.Empty(t, got)
	require.Zero(t, h.Calls(), "no ids, no redis call")

	got, err = s.Cooling(ctx, ids)
	require.NoError(t, err)
	require.EqualValues(t, 1, h.Calls(), "round trips for 10,000 ids")
	require.Zero(t, h.Dials(), "a new connection would be another round trip")
	var cooling int
	for i, id := range ids {
		require.Equal(t, i%2 == 0, got[id], "id %s", id)
		if got[id] {
			cooling++
		}
	}
	require.Equal(t, 5_000, cooling)
}

func TestNew(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	_, err := cooldown.New(rdb, cooldown.Config{Default: -time.Second})
	require.Error(t, err)
	_, err = cooldown.New(nil, cooldown.Config{})
	require.Error(t, err)

	s, err := cooldown.New(rdb, cooldown.Config{})
	require.NoError(t, err)
	require.Equal(t, "offer_cooldown:42", s.Key("42"), "the production key")
	s, err = cooldown.New(rdb, cooldown.Config{Prefix: "test:x:"})
	require.NoError(t, err)
	require.Equal(t, "test:x:offer_cooldown:42", s.Key("42"))
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := cooldown.New(redistest.Unreachable(t), cooldown.Config{})
	require.NoError(t, err)
	require.Error(t, s.Start(ctx, "42", time.Second))
	_, err = s.Cooling(ctx, []string{"42"})
	require.Error(t, err, "an unknown cooldown is an error, not 'not cooling'")
}
