package book_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/keyring"
)

// TestConnectorSecretsAcrossKeyRotation: a connector's secret sealed under the old
// SECRETS_KEY still opens with "new,old", is resealed under the new key, and then opens
// with the new key alone; a setting that leaves out the key in use is refused. The
// connectors' API keys go along.
func TestConnectorSecretsAcrossKeyRotation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	oldKey, newKey := []byte("old-secrets-key-0123456789abcdef"), []byte("new-secrets-key-0123456789abcdef")
	ring := func(keys ...[]byte) *book.Service {
		r, err := keyring.New(keys...)
		require.NoError(t, err)
		return book.New(f.pool, f.shops, f.openings, book.Config{Secrets: r})
	}
	before := ring(oldKey)
	created, err := before.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceCalcom})
	require.NoError(t, err)
	require.NoError(t, before.CheckConnectorKeys(ctx))
	// A second connector holds only an API key sealed under the old key (its secret is
	// sealed anew first, so the check below finds the API key alone).
	sq, err := before.CreateConnector(ctx, f.shop.ID, book.NewConnector{Kind: connectors.SourceSquare})
	require.NoError(t, err)
	_, err = before.SetAPIKey(ctx, f.shop.ID, sq.Connector.ID, "EAAAsquare-token")
	require.NoError(t, err)

	require.ErrorIs(t, ring(newKey).CheckConnectorKeys(ctx), keyring.ErrUnknownKey, "a setting without the key in use")
	_, err = ring(newKey).Receiver(ctx, connectors.SourceCalcom, created.Connector.ID)
	require.ErrorIs(t, err, keyring.ErrUnknownKey)

	both := ring(newKey, oldKey)
	require.NoError(t, both.CheckConnectorKeys(ctx))
	n, err := both.ResealConnectorSecrets(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the secret and the API key")
	n, err = both.ResealConnectorSecrets(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "done once")

	after := ring(newKey)
	require.NoError(t, after.CheckConnectorKeys(ctx))
	r, err := after.Receiver(ctx, connectors.SourceCalcom, created.Connector.ID)
	require.NoError(t, err)
	require.Equal(t, created.Secret, r.Secret)
	require.Equal(t, f.shop.ID, r.ShopID)
	_, err = after.Receiver(ctx, connectors.SourceSquare, created.Connector.ID)
	require.ErrorIs(t, err, book.ErrConnectorNotFound, "a cal.com connector is no Square one")
}
