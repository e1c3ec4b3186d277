// Package config reads the server's configuration from the environment (the variables
// of README's Configuration) and checks it once, at start. A missing or malformed value
// is reported by variable name; secrets never appear in an error.
//
// Load runs one step per concern, in order (each a load method of Config):
//
//	config.go   Load; modes, database, listeners, public URL, log level, retention, proxies
//	redis.go    REDIS_URL (RedisOptions) and REDIS_KEY_PREFIX
//	twilio.go   the Twilio account and shops' senders (A2P, connection overrides)
//	stripe.go   the Stripe account and Stripe Connect
//	secrets.go  ADMIN_TOKEN, SESSION_SECRET, the server keys and the shipped examples
package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
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
	// CalcomAPIURL and SquareAPIURL are CALCOM_API_URL and SQUARE_API_URL: the vendors'
	// APIs a move-up is written back through ("" for cal.com's and Square's own).
	CalcomAPIURL, SquareAPIURL string
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
		(*Config).loadBookingAPIs,
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

// loadBookingAPIs reads the booking systems' API addresses (moves written back).
func (c *Config) loadBookingAPIs(get func(string) string, bad func(name, why string)) {
	c.CalcomAPIURL, c.SquareAPIURL = get("CALCOM_API_URL"), get("SQUARE_API_URL")
	checkAPIURL("CALCOM_API_URL", c.CalcomAPIURL, bad)
	checkAPIURL("SQUARE_API_URL", c.SquareAPIURL, bad)
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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
