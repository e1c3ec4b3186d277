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
	// ErrNotObtained means the key is held by someone else: the last attempt
	// that Redis answered found it taken. A Redis failure is never
	// ErrNotObtained.
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

	//go:embed refresh.lua
	refreshSrc    string
	refreshScript = redis.NewScript(refreshSrc)

	//go:embed pttl.lua
	pttlSrc    string
	pttlScript = redis.NewScript(pttlSrc)
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

// Options changes how Obtain behaves. A nil *Options or the zero value tries
// once.
type Options struct {
	// RetryStrategy says how long to wait before trying again while the key is
	// held by someone else. Nil means no retry.
	RetryStrategy RetryStrategy
}

// Obtain takes the lock on key for ttl, which must be at least a millisecond.
//
// If the key is held by someone else, Obtain tries again as RetryStrategy
// says, and never past ctx. When it gives up it returns an error that wraps
// ErrNotObtained, and also ctx.Err() if it gave up because ctx ended (during a
// wait or during a later attempt). If ctx has a deadline too close for the
// next wait, Obtain returns ErrNotObtained at once rather than sleep for
// nothing.
//
// Any failure to get an answer from Redis (refused, timeout, or ctx ended
// during the first attempt, before anyone was seen holding the key) is
// returned wrapped as it is, never as ErrNotObtained, and is not retried: the
// caller cannot know who holds the key and should fail closed.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opt *Options) (*Lock, error) {
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
	var retry RetryStrategy = noRetry{}
	if opt != nil && opt.RetryStrategy != nil {
		retry = fresh(opt.RetryStrategy)
	}

	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for attempt := 0; ; attempt++ {
		sent := time.Now()
		ok, err := obtainScript.Run(ctx, c.client, []string{key}, token, ttl.Milliseconds()).Bool()
		if err != nil {
			if ctx.Err() == nil {
				return nil, fmt.Errorf("obtain lock %s: %w", key, err)
			}
			// ctx ended while the command was in flight, and it may have
			// landed: take back our token so that it does not block everyone
			// for a whole ttl.
			c.abandon(ctx, key, token, ttl)
			if attempt == 0 {
				return nil, fmt.Errorf("obtain lock %s: %w", key, err)
			}
			// We were waiting for a key that someone else held.
			return nil, fmt.Errorf("obtain lock %s: %w: %w", key, ErrNotObtained, ctx.Err())
		}
		if ok {
			return &Lock{client: c.client, key: key, token: token, obtained: sent}, nil
		}

		backoff := retry.NextBackoff()
		if backoff <= 0 {
			return nil, fmt.Errorf("obtain lock %s: %w", key, ErrNotObtained)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < backoff {
			return nil, fmt.Errorf("obtain lock %s: %w", key, ErrNotObtained)
		}
		if timer == nil {
			timer = time.NewTimer(backoff)
		} else {
			timer.Reset(backoff)
		}
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		if ctx.Err() != nil {
			// The last answer was "held by someone else", so this is still
			// ErrNotObtained, and ctx is why we stopped asking.
			return nil, fmt.Errorf("obtain lock %s: %w: %w", key, ErrNotObtained, ctx.Err())
		}
	}
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
	// obtained is when the successful attempt was sent: the lock expires no
	// sooner than obtained+ttl.
	obtained time.Time
}

// Key returns the Redis key the lock is on.
func (l *Lock) Key() string { return l.key }

// Token returns the random value that marks the key as ours.
func (l *Lock) Token() string { return l.token }

// Release deletes the key if it still holds our token. If the lock expired,
// or expired and someone else took the key, it changes nothing and returns an
// error that wraps ErrNotHeld. Call it with a context that is still alive (see
// context.WithoutCancel) so that an ended request still frees the lock.
func (l *Lock) Release(ctx context.Context) error {
	n, err := releaseScript.Run(ctx, l.client, []string{l.key}, l.token).Int64()
	if err != nil {
		return fmt.Errorf("release lock %s: %w", l.key, err)
	}
	if n == 0 {
		return fmt.Errorf("release lock %s: %w", l.key, ErrNotHeld)
	}
	return nil
}

// Refresh sets the lock's TTL to ttl from now if the key still holds our
// token. Otherwise it changes nothing and returns an error that wraps
// ErrNotHeld.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("refresh lock %s: ttl %s is below 1ms", l.key, ttl)
	}
	n, err := refreshScript.Run(ctx, l.client, []string{l.key}, l.token, ttl.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("refresh lock %s: %w", l.key, err)
	}
	if n == 0 {
		return fmt.Errorf("refresh lock %s: %w", l.key, ErrNotHeld)
	}
	return nil
}

// TTL returns how long the lock has left, or 0 if the key no longer holds our
// token.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	ms, err := pttlScript.Run(ctx, l.client, []string{l.key}, l.token).Int64()
	if err != nil {
		return 0, fmt.Errorf("ttl of lock %s: %w", l.key, err)
	}
	if ms < 0 {
		// -1: the key holds our token but has no TTL. Obtain and Refresh
		// always set one, so someone else changed the key.
		return 0, fmt.Errorf("ttl of lock %s: key has no expiry", l.key)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
