package customers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestErasureKeysChecked: every key that has been the newest at a start must stay in
// the configuration (its suppressions would be forgotten otherwise), until retired; the
// check values are never the keys.
func TestErasureKeysChecked(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	a, b := []byte("key-a-0123456789abcdef0123456789ab"), []byte("key-b-0123456789abcdef0123456789ab")
	with := func(keys ...[]byte) *customers.Service {
		return customertest.NewWith(t, pool, customers.Config{PhoneKeys: keys})
	}

	require.NoError(t, with(a).CheckErasureKeys(ctx), "the first start records A")
	require.ErrorIs(t, with(b).CheckErasureKeys(ctx), customers.ErrErasureKeyMissing)
	require.NoError(t, with(a).CheckErasureKeys(ctx))
	require.NoError(t, with(b, a).CheckErasureKeys(ctx), "the rotation, which records B")
	require.ErrorIs(t, with(a).CheckErasureKeys(ctx), customers.ErrErasureKeyMissing, "B's records would go")
	require.ErrorIs(t, with(b).CheckErasureKeys(ctx), customers.ErrErasureKeyMissing, "A's records would go")

	var stored int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM erasure_key_checks WHERE check_value IN ($1, $2)`, a, b).Scan(&stored))
	require.Zero(t, stored, "check values, not keys")

	n, err := with(b).RetireErasureKeys(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "A given up")
	require.NoError(t, with(b).CheckErasureKeys(ctx))
	require.ErrorIs(t, with(a).CheckErasureKeys(ctx), customers.ErrErasureKeyMissing)
}

// TestErasureKeysFirstStartsRace: two instances starting at once on a new database with
// different keys cannot both record theirs: one starts, the other is refused.
func TestErasureKeysFirstStartsRace(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	a, b := []byte("key-a-0123456789abcdef0123456789ab"), []byte("key-b-0123456789abcdef0123456789ab")
	withA := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{a}})
	withB := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{b}})
	ra := pgtest.Async(func() (struct{}, error) { return struct{}{}, withA.CheckErasureKeys(ctx) })
	rb := pgtest.Async(func() (struct{}, error) { return struct{}{}, withB.CheckErasureKeys(ctx) })
	errA, errB := (<-ra).Err, (<-rb).Err
	require.True(t, (errA == nil) != (errB == nil), "exactly one starts: A %v, B %v", errA, errB)
}
