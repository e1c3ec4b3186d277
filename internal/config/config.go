// Package config reads the server's configuration from the environment (the variables
// of README's Configuration) and checks it once, at start. A missing or malformed value
// is reported by variable name; secrets never appear in an error.
package config

import (
	"errors"
	"fmt"
	"net"
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

	StripeSecretKey string
	// StripeWebhookSecrets holds one secret, or two during a rotation
	// (STRIPE_WEBHOOK_SECRET="whsec_new,whsec_old").
	StripeWebhookSecrets []string
	StripeAPIURL         string

	SessionSecret string
	DevMode       bool
	LogLevel      string

	// MetricsAddr, when set, is a second listener that serves only GET /metrics, for a
	// Prometheus on a private network (METRICS_ADDR, e.g. 127.0.0.1:9090).
	MetricsAddr string
	// MetricsToken, when set, is the bearer token GET /metrics on HTTP_ADDR requires
	// (METRICS_TOKEN). See docs/design.md for who may read /metrics without it.
	MetricsToken string
	// PprofAddr, when set, is a separate listener serving net/http/pprof (PPROF_ADDR);
	// pprof is never served on HTTP_ADDR. Empty (the default) turns it off.
	PprofAddr string
	// Retention is how long Stripe's webhook events, inbound texts and text send claims
	// are kept before a periodic job deletes them (RETENTION_DAYS, whole days; default
	// 30, at least 4: Stripe retries an event for up to 3 days, and its redelivery must
	// still find it).
	Retention time.Duration
}

// Retention bounds, in days (RETENTION_DAYS).
const (
	DefaultRetentionDays = 30
	MinRetentionDays     = 4
	maxRetentionDays     = 3650
)

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
	c := Config{
		DatabaseURL:      get("DATABASE_URL"),
		RedisURL:         get("REDIS_URL"),
		RedisKeyPrefix:   get("REDIS_KEY_PREFIX"),
		HTTPAddr:         get("HTTP_ADDR"),
		PublicURL:        strings.TrimRight(get("PUBLIC_URL"), "/"),
		AdminToken:       get("ADMIN_TOKEN"),
		TwilioAccountSID: get("TWILIO_ACCOUNT_SID"),
		TwilioAuthToken:  get("TWILIO_AUTH_TOKEN"),
		TwilioAPIURL:     get("TWILIO_API_URL"),
		StripeSecretKey:  get("STRIPE_SECRET_KEY"),
		StripeAPIURL:     get("STRIPE_API_URL"),
		SessionSecret:    get("SESSION_SECRET"),
		LogLevel:         get("LOG_LEVEL"),
		MetricsAddr:      get("METRICS_ADDR"),
		MetricsToken:     get("METRICS_TOKEN"),
		PprofAddr:        get("PPROF_ADDR"),
	}
	for _, s := range strings.Split(get("STRIPE_WEBHOOK_SECRET"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.StripeWebhookSecrets = append(c.StripeWebhookSecrets, s)
		}
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = ":8080"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	c.Retention = DefaultRetentionDays * 24 * time.Hour

	var errs []error
	bad := func(name, why string) { errs = append(errs, fmt.Errorf("%s %s", name, why)) }

	switch dev := get("DEV_MODE"); dev {
	case "", "0", "false":
	case "1", "true":
		c.DevMode = true
	default:
		bad("DEV_MODE", "must be 1 or 0")
	}

	if c.DatabaseURL == "" {
		bad("DATABASE_URL", "is required (e.g. postgres://user@127.0.0.1:5432/slotrecovery)")
	} else if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		bad("DATABASE_URL", "must be a postgres:// URL")
	}
	if c.RedisURL == "" {
		bad("REDIS_URL", "is required (e.g. redis://127.0.0.1:6379/0)")
	} else if _, err := RedisOptions(c.RedisURL); err != nil {
		bad("REDIS_URL", "is malformed: "+err.Error())
	}
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
	if c.AdminToken == "" {
		bad("ADMIN_TOKEN", "is required")
	} else if len(c.AdminToken) < 16 {
		bad("ADMIN_TOKEN", "must be at least 16 characters")
	}
	if (c.TwilioAccountSID == "") != (c.TwilioAuthToken == "") {
		bad("TWILIO_ACCOUNT_SID", "and TWILIO_AUTH_TOKEN must be set together")
	}
	if !c.TwilioConfigured() && !c.DevMode {
		bad("TWILIO_ACCOUNT_SID", "and TWILIO_AUTH_TOKEN are required unless DEV_MODE=1 (without them texts are only logged and inbound texts cannot be verified)")
	}
	for _, v := range []struct{ name, val string }{{"TWILIO_API_URL", c.TwilioAPIURL}, {"STRIPE_API_URL", c.StripeAPIURL}} {
		if v.val == "" {
			continue
		}
		if u, err := url.Parse(v.val); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(v.name, "must be an absolute http(s) URL")
		}
	}
	if c.StripeSecretKey != "" && !strings.HasPrefix(c.StripeSecretKey, "sk_") && !strings.HasPrefix(c.StripeSecretKey, "rk_") {
		bad("STRIPE_SECRET_KEY", "must be a Stripe secret or restricted key (sk_… or rk_…)")
	}
	if c.StripeSecretKey != "" && len(c.StripeWebhookSecrets) == 0 {
		bad("STRIPE_WEBHOOK_SECRET", "is required when STRIPE_SECRET_KEY is set")
	}
	if len(c.StripeWebhookSecrets) > 2 {
		bad("STRIPE_WEBHOOK_SECRET", "takes at most two comma-separated secrets (new,old)")
	}
	if c.SessionSecret != "" && len(c.SessionSecret) < 32 {
		bad("SESSION_SECRET", "must be at least 32 characters")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("LOG_LEVEL", "must be debug, info, warn or error")
	}
	if v := get("RETENTION_DAYS"); v != "" {
		days, err := strconv.Atoi(v)
		if err != nil || days < MinRetentionDays || days > maxRetentionDays {
			bad("RETENTION_DAYS", fmt.Sprintf("must be a whole number of days from %d to %d (Stripe retries webhooks for 3 days)", MinRetentionDays, maxRetentionDays))
		} else {
			c.Retention = time.Duration(days) * 24 * time.Hour
		}
	}
	if !c.DevMode {
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
	if c.RedisKeyPrefix != "" && strings.ContainsAny(c.RedisKeyPrefix, " {}") {
		bad("REDIS_KEY_PREFIX", "must not contain spaces or braces")
	}
	return c, errors.Join(errs...)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
