// Package idempotency makes a creating request safe to retry, by Stripe's convention:
// a client sends an Idempotency-Key with it, and the same key with the same request
// within 24 hours gets the first answer again (same status and body) and does nothing
// more. The same key with another request is refused (ErrKeyReused, 422); a second
// request while the first still runs is refused too (ErrInProgress, 409). Keys belong to
// a shop.
//
// Postgres is the truth (the idempotency_keys table, which this package owns): a key is
// taken by inserting its row, so concurrent requests on any instance find exactly one
// winner, and an answer survives restarts. A request that fails with a 5xx (or panics)
// gives its key back, so the retry runs afresh instead of repeating a failure forever;
// one whose process died holding the key is taken over once Stale has passed.
//
// The package knows nothing of HTTP frameworks: the API's middleware
// (internal/shopapi) reads the header and the body, asks Begin, runs the handler and
// stores its answer with Finish.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/pgvalue"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Header is the request header that carries the key; ReplayedHeader marks an answer
// given again ("true"), as Stripe does.
const (
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
)

// MaxKeyLength bounds a key, as Stripe does.
const MaxKeyLength = 255

// TTL is how long a key's answer is kept and given again.
const TTL = 24 * time.Hour

// Errors a request's key can meet.
var (
	// ErrKeyReused: the key was used with another request (another body, method or
	// path) within TTL.
	ErrKeyReused = &problem.Error{Kind: problem.Invalid, Code: "idempotency_key_reused", Field: Header,
		Message: "this Idempotency-Key was used with a different request in the last 24 hours; use a new key for a new request"}
	// ErrInProgress: the first request with this key has not finished.
	ErrInProgress = &problem.Error{Kind: problem.Conflict, Code: "idempotency_request_in_progress", Field: Header,
		Message: "a request with this Idempotency-Key is still being processed; retry in a moment"}
)

// ValidKey reports whether k is an acceptable key: 1 to MaxKeyLength printable ASCII
// characters (a UUID, say).
func ValidKey(k string) bool {
	if k == "" || len(k) > MaxKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Fingerprint identifies a request for its key: the method, the path with its query,
// and the body.
func Fingerprint(method, pathAndQuery string, body []byte) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", method, pathAndQuery)
	h.Write(body)
	return h.Sum(nil)
}

// Answer is a request's answer, as stored and given again.
type Answer struct {
	Status       int
	ContentType  string
	Location     string
	CacheControl string
	Body         []byte
}

// Claim is a key held by the request that took it.
type Claim struct {
	shopID uuid.UUID
	key    string
	holder uuid.UUID
}

// Config configures the Store; zero fields mean the defaults.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Stale is how long after a request took a key, without storing an answer, a retry
	// may take it over (its process died); default a minute, longer than a request may
	// run.
	Stale time.Duration
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Store keeps the keys in Postgres.
type Store struct {
	pool *pgxpool.Pool
	cfg  Config
}

// New returns a Store on pool.
func New(pool *pgxpool.Pool, cfg Config) *Store {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Stale == 0 {
		cfg.Stale = time.Minute
	}
	return &Store{pool: pool, cfg: cfg}
}

// Begin decides what a request with key does: run (a Claim, which the caller ends with
// Finish or Release), answer again (a stored Answer), or neither (ErrKeyReused,
// ErrInProgress, or a failure to reach Postgres).
func (s *Store) Begin(ctx context.Context, shopID uuid.UUID, key string, fingerprint []byte) (*Claim, *Answer, error) {
	if !ValidKey(key) {
		return nil, nil, problem.Invalidf(Header, "%s must be 1 to %d printable ASCII characters", Header, MaxKeyLength)
	}
	// A key released between our insert and our read (its request failed with a 5xx)
	// is free again: try once more.
	for range 3 {
		now := s.cfg.Now().UTC()
		holder := uuid.New()
		_, err := queries.IdempotencyKeyTake(ctx, s.pool, db.IdempotencyKeyTakeParams{
			ShopID: shopID, Key: key, RequestHash: fingerprint, Holder: holder, Now: now, ExpiredBefore: now.Add(-TTL),
		})
		if err == nil {
			return &Claim{shopID: shopID, key: key, holder: holder}, nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, nil, fmt.Errorf("take idempotency key: %w", err)
		}
		row, err := queries.IdempotencyKeyGet(ctx, s.pool, db.IdempotencyKeyGetParams{ShopID: shopID, Key: key})
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read idempotency key: %w", err)
		}
		if !bytes.Equal(row.RequestHash, fingerprint) {
			return nil, nil, ErrKeyReused
		}
		if row.Status.Valid {
			return nil, &Answer{Status: int(row.Status.Int32), ContentType: row.ContentType.String, Location: row.Location.String,
				CacheControl: row.CacheControl.String, Body: row.Body}, nil
		}
		n, err := queries.IdempotencyKeyTakeOver(ctx, s.pool, db.IdempotencyKeyTakeOverParams{
			ShopID: shopID, Key: key, RequestHash: fingerprint, Holder: holder, Now: now, StaleBefore: now.Add(-s.cfg.Stale),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("take over idempotency key: %w", err)
		}
		if n == 1 {
			return &Claim{shopID: shopID, key: key, holder: holder}, nil, nil
		}
		return nil, nil, ErrInProgress
	}
	return nil, nil, ErrInProgress
}

// Finish stores the answer of the request holding c, to be given again to its retries;
// an answer of 500 or more is not kept (Release), so the retry runs afresh.
func (s *Store) Finish(ctx context.Context, c *Claim, a Answer) error {
	if a.Status >= 500 || a.Status < 100 {
		return s.Release(ctx, c)
	}
	// 0 rows: a retry took the key over (this request ran past Stale); its answer will
	// be the one kept.
	if _, err := queries.IdempotencyKeyStore(ctx, s.pool, db.IdempotencyKeyStoreParams{
		ShopID: c.shopID, Key: c.key, Holder: c.holder, Status: pgtype.Int4{Int32: int32(a.Status), Valid: true}, ContentType: pgvalue.TextOrNull(a.ContentType),
		Location: pgvalue.TextOrNull(a.Location), CacheControl: pgvalue.TextOrNull(a.CacheControl), Body: a.Body,
	}); err != nil {
		return fmt.Errorf("store idempotent answer: %w", err)
	}
	return nil
}

// Release gives the key back without an answer: the request failed in a way a retry
// may not (a 5xx, a panic).
func (s *Store) Release(ctx context.Context, c *Claim) error {
	if err := queries.IdempotencyKeyRelease(ctx, s.pool, db.IdempotencyKeyReleaseParams{ShopID: c.shopID, Key: c.key, Holder: c.holder}); err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// ForgetText drops, inside the caller's transaction, shopID's stored answers that hold
// text (a customer's phone number, at their erasure): a retry of such a request runs
// again instead of replaying it.
func ForgetText(ctx context.Context, q db.DBTX, shopID uuid.UUID, text string) error {
	if text == "" {
		return nil
	}
	if _, err := queries.IdempotencyKeyForgetText(ctx, q, db.IdempotencyKeyForgetTextParams{ShopID: shopID, Text: text}); err != nil {
		return fmt.Errorf("forget stored answers: %w", err)
	}
	return nil
}

// Purge deletes up to limit keys taken before `before`, and returns how many it
// deleted (internal/retention runs it until a batch is short, with before = now - TTL:
// older keys are never given again anyway).
func Purge(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.IdempotencyKeyPurge(ctx, conn, db.IdempotencyKeyPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return n, nil
}
