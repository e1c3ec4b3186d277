// Package config reads the server's configuration from the environment (the variables
// of README's Configuration) and checks it once, at start. A missing or malformed value
// is reported by variable name; secrets never appear in an error.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is everything the server reads from its environment.
type Config struct {
	DatabaseURL string
	RedisURL    string
	// RedisKeyPrefix is prepended to every Redis key; empty in production, set by tests
	// that share a Redis server.
	RedisKeyPrefix string
	HTTPAddr       string
	PublicURL      string
	AdminToken     string

	TwilioAccountSID string
	TwilioAuthToken  string
	TwilioAPIURL     string
	// TwilioOverrides is TWILIO_CONNECTION_OVERRIDES: the connection-overrides fragment
	// set on the inbound webhook URL in Twilio ("rc=3&rp=all&ct=2000&rt=13000", stored
	// without its "#"); "" for none. Signatures are checked with and without it, and the
	// answers' action URLs carry it.
	TwilioOverrides string
	// SMSUSA2P is SMS_US_A2P=required: a shop whose number is a US local number and whose
	// A2P 10DLC campaign is not VERIFIED declares no openings. Off (the default), nothing
	// is checked.
	SMSUSA2P bool
	// TwilioISVProfileSID is the platform's own primary customer profile (BU…,
	// TWILIO_ISV_PROFILE_SID), assigned to each shop's secondary profile; empty leaves it
	// out (Twilio then asks for it in review).
	TwilioISVProfileSID string

	StripeSecretKey string
	// StripeWebhookSecrets holds one secret, or two during a rotation
	// (STRIPE_WEBHOOK_SECRET="whsec_new,whsec_old").
	StripeWebhookSecrets []string
	StripeAPIURL         string

	// StripeConnect is STRIPE_CONNECT=on: every checkout shop takes its customers'
	// payments on its own connected Stripe account (direct charges), and needs one whose
	// charges are enabled before it declares checkout openings. Off (the default), every
	// payment is the platform account's, as for one business on its own server.
	StripeConnect bool
	// StripeConnectAccountType is the type of the connected accounts onboarding creates
	// (STRIPE_CONNECT_ACCOUNT_TYPE): standard (the default, the type Stripe recommends for
	// direct charges), express or custom.
	StripeConnectAccountType string
	// PlatformFeeBPS is the platform's application fee on each payment, in basis points of
	// the amount (PLATFORM_FEE_BPS, 0 to MaxPlatformFeeBPS; default 0). An admin may set
	// another for one shop.
	PlatformFeeBPS int
	// StripeConnectWebhookSecrets are the Connect endpoint's signing secrets
	// (STRIPE_CONNECT_WEBHOOK_SECRET, "new,old" during a rotation): Stripe signs connected
	// accounts' events, sent to their own endpoint, with them.
	StripeConnectWebhookSecrets []string

	SessionSecret string
	DevMode       bool
	// WebhookAllowPrivate lets outbound webhook deliveries reach loopback, private,
	// link-local and metadata addresses (WEBHOOK_ALLOW_PRIVATE=1: tests, self-hosting).
	WebhookAllowPrivate bool
	LogLevel            string

	// ErasureKeys key the hashes kept of numbers that said STOP or were erased
	// (ERASURE_KEY="newest,older,..."): the first hashes what is recorded, and every one
	// is tried when matching, so records made under an older key keep matching after a
	// rotation. Required outside DEV_MODE (see loadKeys).
	ErasureKeys [][]byte
	// SecretsKeys seal what the server keeps and must be able to read back (outbound
	// webhooks' signing secrets) and derive the calendar feeds' addresses
	// (SECRETS_KEY="newest,older,..."): the first seals and derives from now on, every one
	// opens what it sealed, so a rotation loses nothing until `server secrets-key
	// reencrypt` has moved everything to the newest. Required outside DEV_MODE.
	SecretsKeys [][]byte

	// MetricsAddr, when set, is a second listener that serves only GET /metrics, for a
	// Prometheus on a private network (METRICS_ADDR, e.g. 127.0.0.1:9090).
	MetricsAddr string
	// MetricsToken, when set, is the bearer token GET /metrics on HTTP_ADDR requires
	// (METRICS_TOKEN). See docs/design.md for who may read /metrics without it.
	MetricsToken string
	// TrustedProxies are the proxies whose X-Forwarded-For is believed
	// (TRUSTED_PROXIES, comma-separated CIDRs; a bare address is one host). The client's
	// address, which every per-client limit counts against, is the TCP peer's unless the
	// peer is in one of them; then the nearest address in X-Forwarded-For that is not.
	// Empty (the default) believes no one: behind a layer-4 balancer, or on a private
	// network, a client could otherwise pick its own address.
	TrustedProxies []netip.Prefix
	// PprofAddr, when set, is a separate listener serving net/http/pprof (PPROF_ADDR);
	// pprof is never served on HTTP_ADDR. Empty (the default) turns it off.
	PprofAddr string
	// Retention is how long Stripe's webhook events, inbound texts and text send claims
	// are kept before a periodic job deletes them (RETENTION_DAYS, whole days; default
	// 30, at least 4: Stripe retries an event for up to 3 days, and its redelivery must
	// still find it).
	Retention time.Duration
	// InboxRetention is how long the owner's inbox keeps conversations and their texts
	// (INBOX_RETENTION_DAYS, whole days; default 365, at least 1): a conversation idle
	// for longer goes, and so does every older text of one still going on. An erasure
	// removes a customer's at once.
	InboxRetention time.Duration
}

// Retention bounds, in days (RETENTION_DAYS).
const (
	DefaultRetentionDays = 30
	MinRetentionDays     = 4
	maxRetentionDays     = 3650
)

// Inbox retention bounds, in days (INBOX_RETENTION_DAYS).
const (
	DefaultInboxRetentionDays = 365
	MinInboxRetentionDays     = 1
)

// MaxPlatformFeeBPS caps PLATFORM_FEE_BPS and every shop's own fee: half the payment.
const MaxPlatformFeeBPS = 5000

// The connected account types STRIPE_CONNECT_ACCOUNT_TYPE accepts.
var connectAccountTypes = []string{"standard", "express", "custom"}

// shippedDefaults are the example secrets docker-compose.yml and scripts/dev.sh fall
// back to, by variable. Anyone can read them in the repository: with them, anyone could
// create shops (ADMIN_TOKEN) or forge Stripe events (STRIPE_WEBHOOK_SECRET). They are
// accepted only with DEV_MODE=1, a local sandbox.
var shippedDefaults = map[string]string{
	"ADMIN_TOKEN":           "dev-admin-token-change-me",
	"STRIPE_WEBHOOK_SECRET": "whsec_dev_secret",
}

// TwilioConfigured reports whether real texts can be sent and inbound signatures checked.
func (c Config) TwilioConfigured() bool { return c.TwilioAccountSID != "" && c.TwilioAuthToken != "" }

// StripeConfigured reports whether checkout payments can be made.
func (c Config) StripeConfigured() bool { return c.StripeSecretKey != "" }

// Load reads and validates the configuration. All problems are reported together.
func Load(getenv func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var errs []error
	bad := func(name, why string) { errs = append(errs, fmt.Errorf("%s %s", name, why)) }
	// In this order: a step may use what an earlier one set (DEV_MODE, HTTP_ADDR,
	// ADMIN_TOKEN, the Stripe settings), and the problems are reported in it.
	steps := []step{
		(*Config).loadModes,
		(*Config).loadDatabase,
		(*Config).loadRedis,
		(*Config).loadListeners,
		(*Config).loadPublicURL,
		(*Config).loadAdminToken,
		(*Config).loadTwilio,
		(*Config).loadStripe,
		(*Config).loadConnect,
		(*Config).loadSender,
		(*Config).loadServerKeys,
		(*Config).loadSessionSecret,
		(*Config).loadLogLevel,
		(*Config).loadRetention,
		(*Config).refuseShippedDefaults,
		(*Config).loadTrustedProxies,
		(*Config).loadRedisKeyPrefix,
	}
	var c Config
	for _, load := range steps {
		load(&c, get, bad)
	}
	return c, errors.Join(errs...)
}

// A step reads the variables of one concern with get (trimmed) into c, with their
// defaults, and reports each problem through bad: by variable name, never with a
// secret's value.
type step func(c *Config, get func(string) string, bad func(name, why string))

// loadModes reads the switches DEV_MODE and WEBHOOK_ALLOW_PRIVATE.
func (c *Config) loadModes(get func(string) string, bad func(name, why string)) {
	switch dev := get("DEV_MODE"); dev {
	case "", "0", "false":
	case "1", "true":
		c.DevMode = true
	default:
		bad("DEV_MODE", "must be 1 or 0")
	}
	switch v := get("WEBHOOK_ALLOW_PRIVATE"); v {
	case "", "0", "false":
	case "1", "true":
		c.WebhookAllowPrivate = true
	default:
		bad("WEBHOOK_ALLOW_PRIVATE", "must be 1 or 0")
	}
}

// loadDatabase reads DATABASE_URL.
func (c *Config) loadDatabase(get func(string) string, bad func(name, why string)) {
	c.DatabaseURL = get("DATABASE_URL")
	if c.DatabaseURL == "" {
		bad("DATABASE_URL", "is required (e.g. postgres://user@127.0.0.1:5432/slotrecovery)")
	} else if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		bad("DATABASE_URL", "must be a postgres:// URL")
	}
}

// loadRedis reads REDIS_URL (REDIS_KEY_PREFIX is loadRedisKeyPrefix's).
func (c *Config) loadRedis(get func(string) string, bad func(name, why string)) {
	c.RedisURL = get("REDIS_URL")
	if c.RedisURL == "" {
		bad("REDIS_URL", "is required (e.g. redis://127.0.0.1:6379/0)")
	} else if _, err := RedisOptions(c.RedisURL); err != nil {
		bad("REDIS_URL", "is malformed: "+err.Error())
	}
}

// loadRedisKeyPrefix reads REDIS_KEY_PREFIX, Load's last step.
func (c *Config) loadRedisKeyPrefix(get func(string) string, bad func(name, why string)) {
	c.RedisKeyPrefix = get("REDIS_KEY_PREFIX")
	if c.RedisKeyPrefix != "" && strings.ContainsAny(c.RedisKeyPrefix, " {}") {
		bad("REDIS_KEY_PREFIX", "must not contain spaces or braces")
	}
}

// loadListeners reads the addresses the server listens on (HTTP_ADDR, default :8080;
// the private METRICS_ADDR and PPROF_ADDR, each apart from the others) and
// METRICS_TOKEN.
func (c *Config) loadListeners(get func(string) string, bad func(name, why string)) {
	c.HTTPAddr = cmpOr(get("HTTP_ADDR"), ":8080")
	c.MetricsAddr = get("METRICS_ADDR")
	c.MetricsToken = get("METRICS_TOKEN")
	c.PprofAddr = get("PPROF_ADDR")
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		bad("HTTP_ADDR", "must be host:port or :port")
	}
	for _, v := range []struct{ name, val string }{{"METRICS_ADDR", c.MetricsAddr}, {"PPROF_ADDR", c.PprofAddr}} {
		if v.val == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(v.val); err != nil {
			bad(v.name, "must be host:port or :port (e.g. 127.0.0.1:9090)")
		} else if v.val == c.HTTPAddr && !strings.HasSuffix(v.val, ":0") {
			bad(v.name, "must differ from HTTP_ADDR: it is a separate, private listener")
		}
	}
	if c.MetricsAddr != "" && c.MetricsAddr == c.PprofAddr && !strings.HasSuffix(c.PprofAddr, ":0") {
		bad("PPROF_ADDR", "must differ from METRICS_ADDR")
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		bad("METRICS_TOKEN", "must be at least 16 characters")
	}
}

// loadPublicURL reads PUBLIC_URL (without a trailing slash). DEV_MODE makes one of
// HTTP_ADDR when it is unset.
func (c *Config) loadPublicURL(get func(string) string, bad func(name, why string)) {
	c.PublicURL = strings.TrimRight(get("PUBLIC_URL"), "/")
	if c.PublicURL == "" {
		if c.DevMode {
			host, port, _ := net.SplitHostPort(c.HTTPAddr)
			c.PublicURL = "http://" + net.JoinHostPort(cmpOr(host, "localhost"), port)
		} else {
			bad("PUBLIC_URL", "is required: Twilio signatures are checked against it")
		}
	} else if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("PUBLIC_URL", "must be an absolute http(s) URL")
	}
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

// loadTwilio reads the platform's Twilio account: required unless DEV_MODE=1.
func (c *Config) loadTwilio(get func(string) string, bad func(name, why string)) {
	c.TwilioAccountSID = get("TWILIO_ACCOUNT_SID")
	c.TwilioAuthToken = get("TWILIO_AUTH_TOKEN")
	c.TwilioAPIURL = get("TWILIO_API_URL")
	if (c.TwilioAccountSID == "") != (c.TwilioAuthToken == "") {
		bad("TWILIO_ACCOUNT_SID", "and TWILIO_AUTH_TOKEN must be set together")
	}
	if !c.TwilioConfigured() && !c.DevMode {
		bad("TWILIO_ACCOUNT_SID", "and TWILIO_AUTH_TOKEN are required unless DEV_MODE=1 (without them texts are only logged and inbound texts cannot be verified)")
	}
	checkAPIURL("TWILIO_API_URL", c.TwilioAPIURL, bad)
}

// loadStripe reads the platform's Stripe account and its webhook endpoint's secrets
// (the Connect settings are loadConnect's).
func (c *Config) loadStripe(get func(string) string, bad func(name, why string)) {
	c.StripeSecretKey = get("STRIPE_SECRET_KEY")
	c.StripeAPIURL = get("STRIPE_API_URL")
	c.StripeWebhookSecrets = secrets(get("STRIPE_WEBHOOK_SECRET"))
	checkAPIURL("STRIPE_API_URL", c.StripeAPIURL, bad)
	if c.StripeSecretKey != "" && !strings.HasPrefix(c.StripeSecretKey, "sk_") && !strings.HasPrefix(c.StripeSecretKey, "rk_") {
		bad("STRIPE_SECRET_KEY", "must be a Stripe secret or restricted key (sk_… or rk_…)")
	}
	if c.StripeSecretKey != "" && len(c.StripeWebhookSecrets) == 0 {
		bad("STRIPE_WEBHOOK_SECRET", "is required when STRIPE_SECRET_KEY is set")
	}
	if len(c.StripeWebhookSecrets) > 2 {
		bad("STRIPE_WEBHOOK_SECRET", "takes at most two comma-separated secrets (new,old)")
	}
}

// checkAPIURL checks an API base URL that replaces a vendor's (a mock's, in tests): ""
// or an absolute http(s) URL.
func checkAPIURL(name, v string, bad func(name, why string)) {
	if v == "" {
		return
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(name, "must be an absolute http(s) URL")
	}
}

// loadSessionSecret reads SESSION_SECRET.
func (c *Config) loadSessionSecret(get func(string) string, bad func(name, why string)) {
	c.SessionSecret = get("SESSION_SECRET")
	if c.SessionSecret != "" && len(c.SessionSecret) < 32 {
		bad("SESSION_SECRET", "must be at least 32 characters")
	}
}

// loadLogLevel reads LOG_LEVEL (default info).
func (c *Config) loadLogLevel(get func(string) string, bad func(name, why string)) {
	c.LogLevel = cmpOr(get("LOG_LEVEL"), "info")
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("LOG_LEVEL", "must be debug, info, warn or error")
	}
}

// loadRetention reads RETENTION_DAYS and INBOX_RETENTION_DAYS, with their defaults.
func (c *Config) loadRetention(get func(string) string, bad func(name, why string)) {
	c.Retention = DefaultRetentionDays * 24 * time.Hour
	c.InboxRetention = DefaultInboxRetentionDays * 24 * time.Hour
	if v := get("RETENTION_DAYS"); v != "" {
		days, err := strconv.Atoi(v)
		if err != nil || days < MinRetentionDays || days > maxRetentionDays {
			bad("RETENTION_DAYS", fmt.Sprintf("must be a whole number of days from %d to %d (Stripe retries webhooks for 3 days)", MinRetentionDays, maxRetentionDays))
		} else {
			c.Retention = time.Duration(days) * 24 * time.Hour
		}
	}
	if v := get("INBOX_RETENTION_DAYS"); v != "" {
		days, err := strconv.Atoi(v)
		if err != nil || days < MinInboxRetentionDays || days > maxRetentionDays {
			bad("INBOX_RETENTION_DAYS", fmt.Sprintf("must be a whole number of days from %d to %d", MinInboxRetentionDays, maxRetentionDays))
		} else {
			c.InboxRetention = time.Duration(days) * 24 * time.Hour
		}
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

// maxTrustedProxies bounds TRUSTED_PROXIES: a deployment's proxies, not a list of the
// internet.
const maxTrustedProxies = 64

// loadTrustedProxies reads TRUSTED_PROXIES: comma-separated CIDRs (10.0.0.0/8,
// fd00::/8) or addresses (one host each).
func (c *Config) loadTrustedProxies(get func(string) string, bad func(name, why string)) {
	for _, s := range strings.Split(get("TRUSTED_PROXIES"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil || a.Zone() != "" {
				bad("TRUSTED_PROXIES", "must be comma-separated CIDRs or addresses (e.g. 10.0.0.0/8,127.0.0.1)")
				return
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, p.Masked())
	}
	if len(c.TrustedProxies) > maxTrustedProxies {
		bad("TRUSTED_PROXIES", fmt.Sprintf("takes at most %d ranges", maxTrustedProxies))
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

// loadConnect reads the Stripe Connect settings. They are checked against each other and
// against the platform's Stripe settings: Connect needs the platform's key, and its
// endpoint's own secret.
func (c *Config) loadConnect(get func(string) string, bad func(name, why string)) {
	switch v := strings.ToLower(get("STRIPE_CONNECT")); v {
	case "", "off", "0", "false":
	case "on", "1", "true":
		c.StripeConnect = true
	default:
		bad("STRIPE_CONNECT", "must be on or off (off, the default: every payment is the platform account's)")
	}
	c.StripeConnectWebhookSecrets = secrets(get("STRIPE_CONNECT_WEBHOOK_SECRET"))
	c.StripeConnectAccountType = strings.ToLower(get("STRIPE_CONNECT_ACCOUNT_TYPE"))
	if c.StripeConnectAccountType == "" {
		c.StripeConnectAccountType = connectAccountTypes[0]
	} else if !slices.Contains(connectAccountTypes, c.StripeConnectAccountType) {
		bad("STRIPE_CONNECT_ACCOUNT_TYPE", "must be standard (the default), express or custom")
	}
	if v := get("PLATFORM_FEE_BPS"); v != "" {
		bps, err := strconv.Atoi(v)
		switch {
		case err != nil || bps < 0 || bps > MaxPlatformFeeBPS:
			bad("PLATFORM_FEE_BPS", fmt.Sprintf("must be a whole number of basis points from 0 to %d (100 is 1%%)", MaxPlatformFeeBPS))
		case bps > 0 && !c.StripeConnect:
			bad("PLATFORM_FEE_BPS", "takes a fee only from connected accounts' payments: set STRIPE_CONNECT=on, or leave it unset")
		default:
			c.PlatformFeeBPS = bps
		}
	}
	if len(c.StripeConnectWebhookSecrets) > 2 {
		bad("STRIPE_CONNECT_WEBHOOK_SECRET", "takes at most two comma-separated secrets (new,old)")
	}
	for _, s := range c.StripeConnectWebhookSecrets {
		if slices.Contains(c.StripeWebhookSecrets, s) {
			bad("STRIPE_CONNECT_WEBHOOK_SECRET", "must differ from STRIPE_WEBHOOK_SECRET: Stripe gives the Connect endpoint a signing secret of its own")
			break
		}
	}
	if !c.StripeConnect {
		return
	}
	if c.StripeSecretKey == "" {
		bad("STRIPE_CONNECT", "is on, which needs STRIPE_SECRET_KEY (the platform's key creates the connected accounts and their checkouts)")
	}
	if len(c.StripeConnectWebhookSecrets) == 0 {
		bad("STRIPE_CONNECT_WEBHOOK_SECRET", "is required when STRIPE_CONNECT=on: connected accounts' events come to /webhooks/stripe/connect signed with the Connect endpoint's secret")
	}
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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// loadSender reads the settings of shops' own senders (docs/sms-sender.md).
func (c *Config) loadSender(get func(string) string, bad func(name, why string)) {
	switch v := strings.ToLower(get("SMS_US_A2P")); v {
	case "", "off":
	case "required":
		c.SMSUSA2P = true
	default:
		bad("SMS_US_A2P", "must be off (the default) or required")
	}
	c.TwilioOverrides = strings.TrimPrefix(get("TWILIO_CONNECTION_OVERRIDES"), "#")
	if err := checkOverrides(c.TwilioOverrides); err != nil {
		bad("TWILIO_CONNECTION_OVERRIDES", err.Error())
	}
	c.TwilioISVProfileSID = get("TWILIO_ISV_PROFILE_SID")
	if c.TwilioISVProfileSID != "" && !isvProfile.MatchString(c.TwilioISVProfileSID) {
		bad("TWILIO_ISV_PROFILE_SID", "must be a customer profile SID: BU and 32 hexadecimal digits")
	}
}

var isvProfile = regexp.MustCompile(`^BU[0-9a-fA-F]{32}$`)

// checkOverrides checks a Twilio connection-overrides fragment against the ranges
// Twilio documents (docs/operations.md, Twilio set-up): ct 100-10000 ms, rt and tt
// 100-15000 ms, rc 0-5 retries, rp a comma-separated list of 4xx, 5xx, ct, rt and all;
// e (the edge) and sni as Twilio takes them.
func checkOverrides(f string) error {
	if f == "" {
		return nil
	}
	q, err := url.ParseQuery(f)
	if err != nil {
		return errors.New("must be a fragment such as rc=3&rp=all&ct=2000&rt=13000")
	}
	ranges := map[string][2]int{"ct": {100, 10000}, "rt": {100, 15000}, "tt": {100, 15000}, "rc": {0, 5}}
	for k, vs := range q {
		if len(vs) != 1 {
			return fmt.Errorf("names %s more than once", k)
		}
		v := vs[0]
		switch k {
		case "ct", "rt", "tt", "rc":
			n, err := strconv.Atoi(v)
			if r := ranges[k]; err != nil || n < r[0] || n > r[1] {
				return fmt.Errorf("%s must be a whole number from %d to %d", k, ranges[k][0], ranges[k][1])
			}
		case "rp":
			for _, p := range strings.Split(v, ",") {
				if !slices.Contains([]string{"4xx", "5xx", "ct", "rt", "all"}, p) {
					return errors.New("rp must list 4xx, 5xx, ct, rt or all, separated by commas")
				}
			}
		case "e", "sni":
		default:
			return fmt.Errorf("%s is not one of Twilio's connection overrides (ct, rt, tt, rc, rp, e, sni)", k)
		}
	}
	return nil
}
