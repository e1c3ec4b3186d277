package keyring_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/keyring"
)

var (
	oldKey = []byte("old-key-0123456789abcdef0123456789")
	newKey = []byte("new-key-0123456789abcdef0123456789")
)

// TestRotation: a value sealed under the old key opens once the new key is first; what
// is sealed then is under the new key, and a ring without the old key refuses the old
// value by name (ErrUnknownKey), never with garbage.
func TestRotation(t *testing.T) {
	t.Parallel()
	before, err := keyring.New(oldKey)
	require.NoError(t, err)
	after, err := keyring.New(newKey, oldKey)
	require.NoError(t, err)
	only, err := keyring.New(newKey)
	require.NoError(t, err)

	v, err := before.Seal([]byte("whsec_abc"), []byte("row-1"))
	require.NoError(t, err)
	require.True(t, keyring.IsSealed(v))
	require.NotContains(t, v, "whsec_abc")
	require.Equal(t, before.ID(), keyring.KeyID(v))

	got, err := after.Open(v, []byte("row-1"))
	require.NoError(t, err)
	require.Equal(t, "whsec_abc", string(got))
	_, err = after.Open(v, []byte("row-2"))
	require.ErrorIs(t, err, keyring.ErrCorrupt, "bound to its context")
	_, err = only.Open(v, []byte("row-1"))
	require.ErrorIs(t, err, keyring.ErrUnknownKey)

	w, err := after.Seal([]byte("whsec_abc"), []byte("row-1"))
	require.NoError(t, err)
	require.Equal(t, only.ID(), keyring.KeyID(w), "sealed under the newest")
	require.NotEqual(t, v, w)
	require.True(t, after.Has(before.ID()))
	require.False(t, only.Has(before.ID()))

	for _, bad := range []string{"", "whsec_abc", "sealed1:", "sealed1:zz:aa", v[:len(v)-2], strings.Replace(v, ":", "x", 1)} {
		_, err := after.Open(bad, []byte("row-1"))
		require.Error(t, err, "%q", bad)
	}
}

// TestDerive: a derived value is the key holder's alone, the same every time, and
// differs by key and by input.
func TestDerive(t *testing.T) {
	t.Parallel()
	r, err := keyring.New(newKey, oldKey)
	require.NoError(t, err)
	old, err := keyring.New(oldKey)
	require.NoError(t, err)
	a, err := r.Derive(r.ID(), []byte("shop"), []byte("1"))
	require.NoError(t, err)
	b, err := r.Derive(r.ID(), []byte("shop"), []byte("1"))
	require.NoError(t, err)
	require.Equal(t, a, b)
	c, err := r.Derive(old.ID(), []byte("shop"), []byte("1"))
	require.NoError(t, err)
	require.NotEqual(t, a, c)
	d, err := r.Derive(r.ID(), []byte("shop1"), []byte(""))
	require.NoError(t, err)
	require.NotEqual(t, a, d, "parts are length-prefixed")
	_, err = old.Derive(r.ID(), []byte("shop"))
	require.ErrorIs(t, err, keyring.ErrUnknownKey)
	_, err = keyring.New([]byte("short"))
	require.Error(t, err)
}

func ExampleRing_Seal() {
	ring, _ := keyring.New([]byte("new-key-0123456789abcdef0123456789"), []byte("old-key-0123456789abcdef0123456789"))
	sealed, _ := ring.Seal([]byte("whsec_abc"), []byte("endpoint 1"))
	plain, _ := ring.Open(sealed, []byte("endpoint 1"))
	fmt.Println(string(plain))
	// Output: whsec_abc
}

// TestMissing: of key ids kept in hex beside what they sealed, the ring counts those it
// does not hold, and ids that are not hex at all.
func TestMissing(t *testing.T) {
	t.Parallel()
	before, err := keyring.New(oldKey)
	require.NoError(t, err)
	after, err := keyring.New(newKey, oldKey)
	require.NoError(t, err)
	only, err := keyring.New(newKey)
	require.NoError(t, err)
	ids := []string{hex.EncodeToString(before.ID()), hex.EncodeToString(after.ID())}
	require.Zero(t, after.Missing(ids))
	require.Equal(t, 1, only.Missing(ids), "the old key was dropped")
	require.Equal(t, 1, after.Missing([]string{"not hex"}))
	require.Zero(t, only.Missing(nil))
}
