// Package customertest makes the customers service for tests, under an erasure key that
// only tests use.
package customertest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/customers"
)

// PhoneKey is the tests' erasure key: public, so never one a server runs with.
var PhoneKey = []byte("slotrecovery tests only: an erasure key anyone can read")

// New returns a customers service on pool keyed by PhoneKey.
func New(t testing.TB, pool *pgxpool.Pool) *customers.Service {
	t.Helper()
	return NewWith(t, pool, customers.Config{})
}

// NewWith is New with cfg, whose PhoneKeys default to PhoneKey.
func NewWith(t testing.TB, pool *pgxpool.Pool, cfg customers.Config) *customers.Service {
	t.Helper()
	if len(cfg.PhoneKeys) == 0 {
		cfg.PhoneKeys = [][]byte{PhoneKey}
	}
	svc, err := customers.New(pool, cfg)
	if err != nil {
		t.Fatalf("customers: %v", err)
	}
	return svc
}
