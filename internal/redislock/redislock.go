package redislock

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	// ErrNotObtained means the key is held by someone else: Redis answered and
	// found it taken. A Redis failure is never ErrNotObtained.
	ErrNotObtained = errors.New("redislock: not obtained")

	// ErrNotHeld means the lock is no longer ours: it expired, or it expired
	// and someone else took the key. Nothing was changed in Redis.
	ErrNotHeld = errors.New("redislock: lock not held")
)

var (
	//go:embed obtain.lua
	obtainSrc    string
	obtainScript = redis.NewScript(obtainSrc)

	//go:embed release.lua
	releaseSrc    string
	releaseScript = redis.NewScript(releaseSrc)
)

// tokenBytes is the size of a lock token before encoding: 128 random bits make
// a collision between two holders practically impossible.
const tokenBytes = 16

// Client obtains locks through one Redis client. It is safe for concurrent
// use.
type Client struct {
	client redis.UniversalClient
}

// New returns a Client that runs its commands through client, which may be a
// single node, Sentinel or Cluster client.
func New(client redis.UniversalClient) *Client {
	return &Client{client: client}
}

// Obtain takes the lock on key for ttl, which must be at least a millisecond, in one
// attempt: it never waits for a held key (a caller that wants to wait watches for the
// holder's release notice, see Watcher). If someone else holds the key it returns an
// error that wraps ErrNotObtained.
//
// Any failure to get an answer from Redis (refused, timeout, or ctx ended during the
// attempt) is returned wrapped as it is, never as ErrNotObtained: the caller cannot
// know who holds the key and should fail closed.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	if ttl < time.Millisecond {
		return nil, fmt.Errorf("obtain lock %s: ttl %s is below 1ms", key, ttl)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("obtain lock %s: %w", key, err)
	}
	token, err := newToken()
	if err != nil {
		return nil, fmt.Errorf("obtain lock %s: %w", key, err)
	}
	ok, err := obtainScript.Run(ctx, c.client, []string{key}, token, ttl.Milliseconds()).Bool()
	if err != nil {
		if ctx.Err() != nil {
			// ctx ended while the command was in flight, and it may have landed: take
			// back our token so that it does not block everyone for a whole ttl.
			c.abandon(ctx, key, token, ttl)
		}
		return nil, fmt.Errorf("obtain lock %s: %w", key, err)
	}
	if !ok {
		return nil, fmt.Errorf("obtain lock %s: %w", key, ErrNotObtained)
	}
	return &Lock{client: c.client, key: key, token: token}, nil
}

// abandonWait bounds the clean-up of an interrupted Obtain, which runs after
// the caller's ctx has ended and so must be short.
const abandonWait = 100 * time.Millisecond

// abandon deletes key if it holds token, as best it can: the lock expires on
// its own anyway.
func (c *Client) abandon(ctx context.Context, key, token string, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(ttl, abandonWait))
	defer cancel()
	_ = releaseScript.Run(ctx, c.client, []string{key}, token).Err()
}

func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Lock is a lock obtained by Obtain. Its methods are safe for concurrent use.
type Lock struct {
	client redis.UniversalClient
	key    string
	token  string
}
