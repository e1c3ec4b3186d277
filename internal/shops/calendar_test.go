package shops_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// Two SECRETS_KEY keys, as the server reads them.
var (
	secretsA = []byte("secrets-key-a-0123456789abcdef0123456789")
	secretsB = []byte("secrets-key-b-0123456789abcdef0123456789")
)

func ring(t *testing.T, keys ...[]byte) *keyring.Ring {
	t.Helper()
	r, err := keyring.New(keys...)
	require.NoError(t, err)
	return r
}

// dumpShops is every shops row as text, as a copy of the database shows it.
func dumpShops(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var dump string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT string_agg(s::text, E'\n') FROM shops s`).Scan(&dump))
	return dump
}

// TestCalendarTokenNotKept: the database keeps no shop's calendar feed token, only its
// hash, so a copy of it gives no one a calendar; the address is derived under the
// server's key, the same on every instance with that key, and a server without the key
// it was derived under refuses to start (CheckCalendarKeys), naming SECRETS_KEY.
func TestCalendarTokenNotKept(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{Secrets: ring(t, secretsA)})
	a, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	rotated, err := svc.RotateCalendarToken(ctx, a.ID)
	require.NoError(t, err)
	dump := dumpShops(t, pool)
	for _, token := range []string{a.CalendarToken, rotated.CalendarToken} {
		require.NotContains(t, dump, strings.TrimPrefix(token, "cal_"), "the token is not kept")
	}

	other := shops.New(pool, shops.Config{Secrets: ring(t, secretsA)})
	got, err := other.Get(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, rotated.CalendarToken, got.CalendarToken, "another instance with the key shows the same address")
	require.NoError(t, other.CheckCalendarKeys(ctx))

	err = shops.New(pool, shops.Config{Secrets: ring(t, secretsB)}).CheckCalendarKeys(ctx)
	require.ErrorIs(t, err, keyring.ErrUnknownKey)
	require.Contains(t, err.Error(), "SECRETS_KEY")
	require.NotContains(t, err.Error(), string(secretsA))
}

// TestCalendarRekey: after SECRETS_KEY's rotation (new,old), `server secrets-key
// reencrypt` re-keys every feed under the new key; the address it replaces keeps working
// (subscribed calendars do not break because the server's key changed) until the owner
// rotates, and the old key is then no longer needed.
func TestCalendarRekey(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	before := shops.New(pool, shops.Config{Secrets: ring(t, secretsA)})
	a, _, err := before.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)

	during := shops.New(pool, shops.Config{Secrets: ring(t, secretsB, secretsA)})
	require.NoError(t, during.CheckCalendarKeys(ctx))
	got, err := during.Get(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, a.CalendarToken, got.CalendarToken, "the old key still derives the address")
	n, err := during.RekeyCalendars(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	after := shops.New(pool, shops.Config{Secrets: ring(t, secretsB)})
	require.NoError(t, after.CheckCalendarKeys(ctx), "the old key is no longer needed")
	got, err = after.Get(ctx, a.ID)
	require.NoError(t, err)
	require.NotEqual(t, a.CalendarToken, got.CalendarToken)
	for _, token := range []string{a.CalendarToken, got.CalendarToken} {
		found, err := after.ByCalendarToken(ctx, token)
		require.NoError(t, err)
		require.Equal(t, a.ID, found.ID)
	}
	n, err = after.RekeyCalendars(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to move")

	rotated, err := after.RotateCalendarToken(ctx, a.ID)
	require.NoError(t, err)
	for _, token := range []string{a.CalendarToken, got.CalendarToken} {
		_, err := after.ByCalendarToken(ctx, token)
		require.ErrorIs(t, err, shops.ErrCalendarNotFound, "a rotation ends every earlier address")
	}
	_, err = after.ByCalendarToken(ctx, rotated.CalendarToken)
	require.NoError(t, err)
}

// TestCalendarDerivedForOldShops: a shop from before migration 0033 (its token's hash
// kept, no key named) gets a derived address at the server's start and keeps the one
// its owner subscribed to, until a rotation.
func TestCalendarDerivedForOldShops(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	svc := shops.New(pool, shops.Config{Secrets: ring(t, secretsA)})
	a, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	legacy := "cal_" + strings.Repeat("ab", 32)
	hash := sha256.Sum256([]byte(legacy))
	_, err = pool.Exec(ctx, `UPDATE shops SET calendar_key_id = NULL, calendar_generation = 0, calendar_token_hash = $2
		WHERE id = $1`, a.ID, hash[:])
	require.NoError(t, err)

	n, err := svc.DeriveCalendarTokens(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got, err := svc.Get(ctx, a.ID)
	require.NoError(t, err)
	require.Regexp(t, `^cal_[0-9a-f]{64}$`, got.CalendarToken)
	for _, token := range []string{legacy, got.CalendarToken} {
		found, err := svc.ByCalendarToken(ctx, token)
		require.NoError(t, err, token)
		require.Equal(t, a.ID, found.ID)
	}
	n, err = svc.DeriveCalendarTokens(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "once")

	_, err = svc.RotateCalendarToken(ctx, a.ID)
	require.NoError(t, err)
	_, err = svc.ByCalendarToken(ctx, legacy)
	require.ErrorIs(t, err, shops.ErrCalendarNotFound)
}

// TestOldCalendarAddressExpires: the address a shop had before its first derived one
// (or before a re-key) keeps working for OldCalendarAddressLasts, which the shop says
// (for the dashboard's notice), and not a moment longer; the current one goes on.
func TestOldCalendarAddressExpires(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	svc := shops.New(pool, shops.Config{Secrets: ring(t, secretsA), Now: clock})
	a, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	require.Nil(t, a.OldCalendarAddressUntil, "a new shop has no old address")
	legacy := "cal_" + strings.Repeat("cd", 32)
	hash := sha256.Sum256([]byte(legacy))
	_, err = pool.Exec(ctx, `UPDATE shops SET calendar_key_id = NULL, calendar_generation = 0, calendar_token_hash = $2
		WHERE id = $1`, a.ID, hash[:])
	require.NoError(t, err)
	_, err = svc.DeriveCalendarTokens(ctx)
	require.NoError(t, err)
	got, err := svc.Get(ctx, a.ID)
	require.NoError(t, err)
	require.NotNil(t, got.OldCalendarAddressUntil)
	until := now.Add(shops.OldCalendarAddressLasts)
	require.True(t, until.Equal(*got.OldCalendarAddressUntil), "until %s, want %s", got.OldCalendarAddressUntil, until)

	at := func(t0 time.Time) { mu.Lock(); now = t0; mu.Unlock() }
	at(until.Add(-time.Second))
	_, err = svc.ByCalendarToken(ctx, legacy)
	require.NoError(t, err, "a second before its end")
	at(until)
	_, err = svc.ByCalendarToken(ctx, legacy)
	require.ErrorIs(t, err, shops.ErrCalendarNotFound, "at its end")
	found, err := svc.ByCalendarToken(ctx, got.CalendarToken)
	require.NoError(t, err, "the current address goes on")
	require.Equal(t, a.ID, found.ID)
}
