// Package keyring holds a server key and the keys it replaced (a setting such as
// SECRETS_KEY="newest,older,..."), and does with them what data kept at rest needs:
// seal a value under the newest key and open it under whichever key sealed it (AES-256-GCM),
// derive a value under one key (HMAC-SHA256), and name each key by an ID that says nothing
// of it. A sealed value carries its key's ID, so a server whose keys leave one out can
// tell before it starts (Has), and a rotation re-seals values one by one (KeyID).
//
// Each purpose gets keys of its own, derived from the configured secret with a label
// (HMAC-SHA256), so one setting can serve sealing and derivation without reusing a key.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// IDLen is the length of a key's ID in bytes.
const IDLen = 8

// Errors of Open.
var (
	// ErrUnknownKey means the value was sealed under a key the ring does not hold.
	ErrUnknownKey = errors.New("keyring: sealed under a key not configured")
	// ErrCorrupt means the value is not a sealed value, or was changed.
	ErrCorrupt = errors.New("keyring: not a sealed value, or altered")
)

// sealedPrefix starts every sealed value (version 1: key ID, then nonce and ciphertext).
const sealedPrefix = "sealed1:"

// Ring is a list of keys, newest first. The zero Ring holds none; use New or Random.
type Ring struct {
	keys []key
}

type key struct {
	id   [IDLen]byte
	aead cipher.AEAD
	mac  []byte
}

// CheckValue is HMAC-SHA256 of label under secret: a value that identifies the secret
// (equal secrets, equal values) and says nothing of it. ID is its first IDLen bytes
// under the ring's own label.
func CheckValue(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// New returns a ring of secrets, newest first. Each must be at least 16 bytes (the
// settings ask for more).
func New(secrets ...[]byte) (*Ring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("keyring: no key")
	}
	r := &Ring{keys: make([]key, len(secrets))}
	for i, s := range secrets {
		if len(s) < 16 {
			return nil, errors.New("keyring: a key is shorter than 16 bytes")
		}
		block, err := aes.NewCipher(CheckValue(s, "slotrecovery keyring seal v1"))
		if err != nil {
			return nil, fmt.Errorf("keyring: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("keyring: %w", err)
		}
		r.keys[i] = key{aead: aead, mac: CheckValue(s, "slotrecovery keyring derive v1")}
		copy(r.keys[i].id[:], CheckValue(s, "slotrecovery keyring id v1"))
	}
	return r, nil
}

// Random returns a ring of one random key, which lives as long as the process: for a
// component configured without keys (tests). What it seals cannot be opened by another
// process.
func Random() *Ring {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	r, _ := New(b)
	return r
}

// ID is the newest key's ID: what is sealed or derived now is under it.
func (r *Ring) ID() []byte { return r.keys[0].id[:] }

// IDs returns the IDs of the ring's keys, newest first: a value derived under one key
// is found again by trying each.
func (r *Ring) IDs() [][]byte {
	out := make([][]byte, len(r.keys))
	for i := range r.keys {
		out[i] = r.keys[i].id[:]
	}
	return out
}

// Has reports whether the ring holds the key whose ID is id.
func (r *Ring) Has(id []byte) bool { return r.find(id) != nil }

// Missing counts the key ids, in hex as the database keeps them beside what they
// sealed, that the ring does not hold (an id that is not hex counts as missing): a
// start checks that nothing sealed under a dropped key is left.
func (r *Ring) Missing(hexIDs []string) int {
	n := 0
	for _, h := range hexIDs {
		id, err := hex.DecodeString(h)
		if err != nil || !r.Has(id) {
			n++
		}
	}
	return n
}

func (r *Ring) find(id []byte) *key {
	for i := range r.keys {
		if hmac.Equal(r.keys[i].id[:], id) {
			return &r.keys[i]
		}
	}
	return nil
}

// Seal encrypts plaintext under the newest key, bound to context (which Open must be
// given again: a value moved to another row or column does not open). The result is
// text: "sealed1:", the key's ID in hex, ":", base64 of nonce and ciphertext.
func (r *Ring) Seal(plaintext, context []byte) (string, error) {
	k := &r.keys[0]
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("keyring: nonce: %w", err)
	}
	sealed := k.aead.Seal(nonce, nonce, plaintext, context)
	return sealedPrefix + hex.EncodeToString(k.id[:]) + ":" + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// IsSealed reports whether v has the form Seal gives (not whether it opens).
func IsSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }

// KeyID is the ID of the key that sealed v, or nil when v is not sealed.
func KeyID(v string) []byte {
	rest, ok := strings.CutPrefix(v, sealedPrefix)
	if !ok {
		return nil
	}
	idHex, _, ok := strings.Cut(rest, ":")
	id, err := hex.DecodeString(idHex)
	if !ok || err != nil || len(id) != IDLen {
		return nil
	}
	return id
}

// Open decrypts what Seal made with the same context, under whichever of the ring's keys
// sealed it: ErrUnknownKey when none did, ErrCorrupt when it is not a sealed value or
// was altered.
func (r *Ring) Open(v string, context []byte) ([]byte, error) {
	id := KeyID(v)
	if id == nil {
		return nil, ErrCorrupt
	}
	k := r.find(id)
	if k == nil {
		return nil, ErrUnknownKey
	}
	_, b64, _ := strings.Cut(strings.TrimPrefix(v, sealedPrefix), ":")
	sealed, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil || len(sealed) < k.aead.NonceSize() {
		return nil, ErrCorrupt
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], context)
	if err != nil {
		return nil, ErrCorrupt
	}
	return plain, nil
}

// Derive returns HMAC-SHA256 of the parts (each length-prefixed, so no two lists give
// the same input) under the key whose ID is id: a value only the key's holder can make
// again. ErrUnknownKey when the ring does not hold it.
func (r *Ring) Derive(id []byte, parts ...[]byte) ([]byte, error) {
	k := r.find(id)
	if k == nil {
		return nil, ErrUnknownKey
	}
	m := hmac.New(sha256.New, k.mac)
	for _, p := range parts {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(p)>>24), byte(len(p)>>16), byte(len(p)>>8), byte(len(p))
		m.Write(n[:])
		m.Write(p)
	}
	return m.Sum(nil), nil
}
