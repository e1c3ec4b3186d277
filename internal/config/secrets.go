package config

import (
	"fmt"
	"strings"
)

// shippedDefaults are the example secrets docker-compose.yml and scripts/dev.sh fall
// back to, by variable. Anyone can read them in the repository: with them, anyone could
// create shops (ADMIN_TOKEN) or forge Stripe events (STRIPE_WEBHOOK_SECRET). They are
// accepted only with DEV_MODE=1, a local sandbox.
var shippedDefaults = map[string]string{
	"ADMIN_TOKEN":           "dev-admin-token-change-me",
	"STRIPE_WEBHOOK_SECRET": "whsec_dev_secret",
}

// loadAdminToken reads ADMIN_TOKEN.
func (c *Config) loadAdminToken(get func(string) string, bad func(name, why string)) {
	c.AdminToken = get("ADMIN_TOKEN")
	if c.AdminToken == "" {
		bad("ADMIN_TOKEN", "is required")
	} else if len(c.AdminToken) < 16 {
		bad("ADMIN_TOKEN", "must be at least 16 characters")
	}
}

// loadSessionSecret reads SESSION_SECRET.
func (c *Config) loadSessionSecret(get func(string) string, bad func(name, why string)) {
	c.SessionSecret = get("SESSION_SECRET")
	if c.SessionSecret != "" && len(c.SessionSecret) < 32 {
		bad("SESSION_SECRET", "must be at least 32 characters")
	}
}

// refuseShippedDefaults refuses, outside DEV_MODE, the example secrets anyone can read
// (shippedDefaults).
func (c *Config) refuseShippedDefaults(_ func(string) string, bad func(name, why string)) {
	if c.DevMode {
		return
	}
	shipped := func(name, val string) {
		if val == shippedDefaults[name] {
			bad(name, "is the example value docker-compose.yml and scripts/dev.sh ship, which anyone can read: "+
				"set a secret of your own (e.g. openssl rand -hex 32), or DEV_MODE=1 for a local sandbox")
		}
	}
	shipped("ADMIN_TOKEN", c.AdminToken)
	for _, s := range c.StripeWebhookSecrets {
		shipped("STRIPE_WEBHOOK_SECRET", s)
	}
}

// Bounds of ERASURE_KEY and SECRETS_KEY. The newest key is what seals and hashes from
// now on: at least minKeyLen characters that look random (minKeyLen random bytes when
// written in hex, as `openssl rand -hex 32` writes them). An older key only has to have
// been a key: at least minOldKeyLen characters, the shortest ADMIN_TOKEN, which was the
// key of a server that ran before these settings were required.
const (
	minKeyLen      = 32
	minOldKeyLen   = 16
	minKeyDistinct = 10
	maxKeys        = 8
)

// devKeys are the keys DEV_MODE uses when ERASURE_KEY or SECRETS_KEY is unset, by
// variable: fixed, so that a sandbox's secrets and STOPs survive its restarts, and
// refused outside DEV_MODE like every shipped example.
var devKeys = map[string]string{
	"ERASURE_KEY": "dev-erasure-key-change-me-0123456789abcdef",
	"SECRETS_KEY": "dev-secrets-key-change-me-0123456789abcdef",
}

// loadServerKeys reads ERASURE_KEY and SECRETS_KEY, whose newest keys must differ.
func (c *Config) loadServerKeys(get func(string) string, bad func(name, why string)) {
	c.ErasureKeys = c.loadKeys("ERASURE_KEY", get("ERASURE_KEY"), bad)
	c.SecretsKeys = c.loadKeys("SECRETS_KEY", get("SECRETS_KEY"), bad)
	if len(c.ErasureKeys) > 0 && len(c.SecretsKeys) > 0 && string(c.ErasureKeys[0]) == string(c.SecretsKeys[0]) {
		bad("SECRETS_KEY", "must not start with ERASURE_KEY's newest key: each purpose has a key of its own")
	}
}

// loadKeys reads a list of server keys, newest first (ERASURE_KEY, SECRETS_KEY). Outside
// DEV_MODE it is required, and its newest key may not be ADMIN_TOKEN: a key that also
// opens the API would sit, as the HMACs made under it, in the database it protects.
// Unset in DEV_MODE, the sandbox's fixed key is the newest and ADMIN_TOKEN an older
// one, so a sandbox database from before the keys were required keeps its secrets and
// STOPs.
func (c *Config) loadKeys(name, v string, bad func(name, why string)) [][]byte {
	list := secrets(v)
	if len(list) == 0 {
		if !c.DevMode {
			bad(name, fmt.Sprintf("is required unless DEV_MODE=1: at least %d random bytes (e.g. openssl rand -hex 32). "+
				"A database that ran without it kept what it protects under ADMIN_TOKEN: set %s=<new key>,<ADMIN_TOKEN's value> "+
				"(docs/operations.md, Moving off ADMIN_TOKEN)", minKeyLen, name))
			return nil
		}
		keys := [][]byte{[]byte(devKeys[name])}
		if len(c.AdminToken) >= minOldKeyLen {
			keys = append(keys, []byte(c.AdminToken))
		}
		return keys
	}
	if len(list) > maxKeys {
		bad(name, fmt.Sprintf("takes at most %d comma-separated keys (newest first)", maxKeys))
		return nil
	}
	if why := weakKey(list[0]); why != "" {
		bad(name, fmt.Sprintf("has a newest (first) key that %s: use at least %d random bytes (e.g. openssl rand -hex 32)", why, minKeyLen))
		return nil
	}
	if list[0] == c.AdminToken {
		bad(name, "must not start with ADMIN_TOKEN's value: give it a key of its own (ADMIN_TOKEN's value may follow it, "+
			"as an older key, while the database moves off it)")
		return nil
	}
	if !c.DevMode && list[0] == devKeys[name] {
		bad(name, "is the example value DEV_MODE uses, which anyone can read: set a key of your own (e.g. openssl rand -hex 32)")
		return nil
	}
	keys := make([][]byte, 0, len(list))
	for _, k := range list {
		if len(k) < minOldKeyLen {
			bad(name, fmt.Sprintf("takes older keys of at least %d characters each", minOldKeyLen))
			return nil
		}
		keys = append(keys, []byte(k))
	}
	return keys
}

// weakKey says why k cannot be a newest key, or "" when it can: shorter than minKeyLen,
// hex digits for fewer than minKeyLen bytes, or too few distinct characters to be random.
func weakKey(k string) string {
	if len(k) < minKeyLen {
		return fmt.Sprintf("is shorter than %d characters", minKeyLen)
	}
	if isHex(k) && len(k) < 2*minKeyLen {
		return fmt.Sprintf("is hexadecimal for fewer than %d bytes", minKeyLen)
	}
	distinct := map[rune]bool{}
	for _, r := range k {
		distinct[r] = true
	}
	if len(distinct) < minKeyDistinct {
		return "repeats too few characters to be random"
	}
	return ""
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// secrets splits a comma-separated list of secrets, dropping empty ones.
func secrets(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
