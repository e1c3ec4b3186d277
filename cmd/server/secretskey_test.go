package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// Two SECRETS_KEY keys (at least 32 characters each, as SECRETS_KEY requires).
const (
	secretsKeyA = "secrets-key-a-0123456789abcdef0123456789"
	secretsKeyB = "secrets-key-b-0123456789abcdef0123456789"
)

// TestSecretsKeyCheckedAtStart: webhook secrets are sealed and calendar feeds derived
// under SECRETS_KEY's newest key. A start whose SECRETS_KEY leaves out a key in use is
// refused, naming SECRETS_KEY and what to do (never the keys); the rotation new,old
// starts; `server secrets-key reencrypt` moves everything to the new key, after which
// the new key alone starts. Unset, ADMIN_TOKEN is the key, and the error says so.
func TestSecretsKeyCheckedAtStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ringA, err := keyring.New([]byte(secretsKeyA))
	require.NoError(t, err)
	shop, _, err := shops.New(e.pool, shops.Config{Secrets: ringA}).Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC",
		SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	hk := hooks.New(e.pool, nil, hooks.Config{Secrets: ringA})
	t.Cleanup(hk.Close)
	_, _, err = hk.CreateEndpoint(ctx, shop.ID, hooks.NewEndpoint{URL: "https://crm.example.com/hooks"})
	require.NoError(t, err)

	key := func(v string) map[string]string { return map[string]string{"SECRETS_KEY": v} }
	require.NoError(t, e.startStop(key(secretsKeyA)))
	err = e.startStop(key(secretsKeyB))
	require.Error(t, err, "B alone cannot open what A sealed")
	require.Contains(t, err.Error(), "SECRETS_KEY")
	require.Contains(t, err.Error(), "secrets-key reencrypt", "the error says what to do")
	require.NotContains(t, err.Error(), secretsKeyA, "never the keys themselves")
	require.NotContains(t, err.Error(), secretsKeyB, "never the keys themselves")
	require.NoError(t, e.startStop(key(secretsKeyB+","+secretsKeyA)), "the rotation B,A starts")

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"secrets-key", "reencrypt"}, e.vars(key(secretsKeyB+","+secretsKeyA)), &out, io.Discard))
	require.Contains(t, out.String(), "1 webhook endpoints' secrets, 1 calendar feeds")
	require.NoError(t, e.startStop(key(secretsKeyB)), "B alone, once everything moved to it")
	require.Error(t, e.startStop(key(secretsKeyA)), "and A alone is refused now")

	// Without SECRETS_KEY the admin token is the key, which sealed nothing here.
	err = e.startStop(nil)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "SECRETS_KEY is unset, so ADMIN_TOKEN is the key"), err.Error())
}
