package cooldown

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultDuration is how long a cooldown lasts when neither Config.Default
// nor the call says otherwise.
const DefaultDuration = 24 * time.Hour

// keyPrefix names the key kind; see Store.Key.
const keyPrefix = "offer_cooldown:"

// Config configures a Store. The zero value is the production setting.
type Config struct {
	// Prefix is prepended to every key: "" in production, a per-test prefix in
	// tests.
	Prefix string
	// Default is the cooldown used when Start is given none. 0 means
	// DefaultDuration; negative is an error.
	Default time.Duration
}

// Store sets and checks cooldowns. It is safe for concurrent use.
type Store struct {
	client redis.UniversalClient
	prefix string
	def    time.Duration
}

// New returns a Store that keeps its keys in client, which may be a single
// node, Sentinel or Cluster client.
func New(client redis.UniversalClient, cfg Config) (*Store, error) {
	if client == nil {
		return nil, errors.New("new cooldown store: nil redis client")
	}
	if cfg.Default < 0 {
		return nil, fmt.Errorf("new cooldown store: negative default duration %s", cfg.Default)
	}
	return &Store{
		client: client,
		prefix: cfg.Prefix,
		def:    cmp.Or(cfg.Default, DefaultDuration),
	}, nil
}

// Key returns the Redis key for id: Prefix + "offer_cooldown:" + id. It is the
// only place that spells the key.
func (s *Store) Key(id string) string {
	return s.prefix + keyPrefix + id
}

// Start puts id in cooldown for d from now, or for the default if d is 0 or
// less. Starting again replaces the remaining time.
func (s *Store) Start(ctx context.Context, id string, d time.Duration) error {
	if id == "" {
		return errors.New("start cooldown: empty id")
	}
	if d <= 0 {
		d = s.def
	}
	// Redis counts in whole milliseconds; go-redis would round a shorter
	// positive duration itself, but with a log line.
	d = max(d, time.Millisecond)
	if err := s.client.Set(ctx, s.Key(id), "1", d).Err(); err != nil {
		return fmt.Errorf("start cooldown %s: %w", id, err)
	}
	return nil
}

// Cooling reports which of ids are cooling down: the map has an entry for
// every distinct id, true if it is cooling down. It costs one pipeline, so
// one round trip on a single Redis whatever len(ids) is (see the package
// comment for Cluster). No ids means no call to Redis and an empty map.
func (s *Store) Cooling(ctx context.Context, ids []string) (map[string]bool, error) {
	cooling := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return cooling, nil
	}
	// EXISTS per key rather than one MGET: it stays valid on Cluster, where
	// an MGET across hash slots fails with CROSSSLOT.
	cmds := make([]*redis.IntCmd, len(ids))
	pipe := s.client.Pipeline()
	for i, id := range ids {
		cmds[i] = pipe.Exists(ctx, s.Key(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("check %d cooldowns: %w", len(ids), err)
	}
	for i, id := range ids {
		cooling[id] = cmds[i].Val() > 0
	}
	return cooling, nil
}
