package hooks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
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

// dumpEndpoints is every webhook_endpoints row as text, as a copy of the database
// shows it.
func (s *scene) dumpEndpoints() string {
	s.t.Helper()
	var dump string
	require.NoError(s.t, s.pool.QueryRow(context.Background(),
		`SELECT COALESCE(string_agg(e::text, E'\n'), '') FROM webhook_endpoints e`).Scan(&dump))
	return dump
}

// TestSecretsSealedAtRest: the database keeps no endpoint's signing secret as it is (a
// copy of it could sign events for every shop's receivers): each is sealed under
// SECRETS_KEY, the rotated-away one too, and one kept plain from before is sealed at
// start. After SECRETS_KEY's rotation (new,old) every secret still opens; a setting
// without a key in use is refused (CheckSecretsKeys) until ResealSecrets has moved
// everything to the newest key, after which deliveries signed under the new key alone
// verify with the secrets the owner was shown.
func TestSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	cfg := hooks.Config{AllowPrivate: true, DevMode: true, Secrets: ring(t, secretsA)}
	s := newScene(t, cfg)
	ctx := context.Background()
	r := hookstest.NewReceiver(t)
	ep, first := s.endpoint(r)
	_, second, err := s.svc.RotateSecret(ctx, s.shop.ID, ep.ID)
	require.NoError(t, err)
	r.SetSecrets(second)

	// An endpoint whose secret an older version kept plain.
	r2 := hookstest.NewReceiver(t)
	ep2, _ := s.endpoint(r2)
	plain := mustSecret(t)
	_, err = s.pool.Exec(ctx, `UPDATE webhook_endpoints SET secret = $2 WHERE id = $1`, ep2.ID, plain)
	require.NoError(t, err)
	r2.SetSecrets(plain)
	n, err := s.svc.SealPlainSecrets(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	dump := s.dumpEndpoints()
	for _, secret := range []string{first, second, plain} {
		require.NotContains(t, dump, strings.TrimPrefix(secret, hooks.SecretPrefix), "a secret is never kept as it is")
	}

	during := hooks.New(s.pool, s.queue, withSecrets(cfg, ring(t, secretsB, secretsA)))
	t.Cleanup(during.Close)
	require.NoError(t, during.CheckSecretsKeys(ctx))
	after := hooks.New(s.pool, s.queue, withSecrets(cfg, ring(t, secretsB)))
	t.Cleanup(after.Close)
	err = after.CheckSecretsKeys(ctx)
	require.ErrorIs(t, err, keyring.ErrUnknownKey, "the old key still seals the secrets")
	require.Contains(t, err.Error(), "SECRETS_KEY")
	require.Contains(t, err.Error(), "secrets-key reencrypt", "the error says what to do")
	require.NotContains(t, err.Error(), string(secretsA))

	n, err = during.ResealSecrets(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = during.ResealSecrets(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left under the old key")
	require.NoError(t, after.CheckSecretsKeys(ctx), "the old key is no longer needed")
	dump = s.dumpEndpoints()
	for _, secret := range []string{first, second, plain} {
		require.NotContains(t, dump, strings.TrimPrefix(secret, hooks.SecretPrefix))
	}

	// The server with the new key alone delivers, signed with the secrets the owner has.
	hookstest.Deliver(t, s.pool, after, hookstest.RiverConfig{})
	s.record(hooks.CustomerOptedOut, 1)
	require.Len(t, r.WaitFor(t, 1, 20*time.Second), 1)
	require.Len(t, r2.WaitFor(t, 1, 20*time.Second), 1)
	require.Empty(t, r.Unverified())
	require.Empty(t, r2.Unverified())
}

func withSecrets(cfg hooks.Config, r *keyring.Ring) hooks.Config {
	cfg.Secrets = r
	return cfg
}
