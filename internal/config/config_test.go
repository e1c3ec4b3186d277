package config_test

import (
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func base() map[string]string {
	return map[string]string{
		"DATABASE_URL":          "postgres://app:s3cretpw@127.0.0.1:5432/slots",
		"REDIS_URL":             "redis://:redispw@127.0.0.1:6379/0",
		"PUBLIC_URL":            "https://slots.example.com/",
		"ADMIN_TOKEN":           "admin-token-0123456789",
		"TWILIO_ACCOUNT_SID":    "AC0123",
		"TWILIO_AUTH_TOKEN":     "twiliosecret",
		"STRIPE_SECRET_KEY":     "sk_test_abc",
		"STRIPE_WEBHOOK_SECRET": "whsec_new, whsec_old",
		"ERASURE_KEY":           erasureKey,
		"SECRETS_KEY":           secretsKey,
	}
}

// Keys of 32 random bytes in hex, as `openssl rand -hex 32` writes them.
const (
	erasureKey = "6f1c0e4d2b9a87355e1f0c3b7a2d9e4f1b6c8d0a3e5f7291c4b6d8e0f2a4c6e8"
	secretsKey = "a9e3c5f70b1d2e4f6a8c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d1f3a5c7e9b0d2f"
)

func TestLoadValid(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(base()))
	require.NoError(t, err)
	require.Equal(t, ":8080", c.HTTPAddr)
	require.Equal(t, "https://slots.example.com", c.PublicURL)
	require.Equal(t, []string{"whsec_new", "whsec_old"}, c.StripeWebhookSecrets)
	require.False(t, c.DevMode)
	require.True(t, c.TwilioConfigured())
	require.Empty(t, c.PprofAddr, "pprof is off by default")
	require.Empty(t, c.MetricsAddr)
	require.Empty(t, c.MetricsToken)
}

func TestLoadErrorsNameTheVariableAndHideSecrets(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		set     map[string]string
		wantVar string
	}{
		"no database":         {map[string]string{"DATABASE_URL": ""}, "DATABASE_URL"},
		"bad database":        {map[string]string{"DATABASE_URL": "mysql://root:s3cretpw@x/y"}, "DATABASE_URL"},
		"no redis":            {map[string]string{"REDIS_URL": ""}, "REDIS_URL"},
		"bad redis":           {map[string]string{"REDIS_URL": "memcache://:redispw@x"}, "REDIS_URL"},
		"bad addr":            {map[string]string{"HTTP_ADDR": "8080"}, "HTTP_ADDR"},
		"no public url":       {map[string]string{"PUBLIC_URL": ""}, "PUBLIC_URL"},
		"short admin":         {map[string]string{"ADMIN_TOKEN": "short"}, "ADMIN_TOKEN"},
		"half twilio":         {map[string]string{"TWILIO_AUTH_TOKEN": ""}, "TWILIO_AUTH_TOKEN"},
		"no twilio, no dev":   {map[string]string{"TWILIO_AUTH_TOKEN": "", "TWILIO_ACCOUNT_SID": ""}, "DEV_MODE=1"},
		"bad stripe key":      {map[string]string{"STRIPE_SECRET_KEY": "pk_live_oops"}, "STRIPE_SECRET_KEY"},
		"no webhook secret":   {map[string]string{"STRIPE_WEBHOOK_SECRET": ""}, "STRIPE_WEBHOOK_SECRET"},
		"three secrets":       {map[string]string{"STRIPE_WEBHOOK_SECRET": "a,b,c"}, "STRIPE_WEBHOOK_SECRET"},
		"bad twilio api url":  {map[string]string{"TWILIO_API_URL": "localhost:9"}, "TWILIO_API_URL"},
		"bad cal.com api url": {map[string]string{"CALCOM_API_URL": "api.cal.com"}, "CALCOM_API_URL"},
		"bad square api url":  {map[string]string{"SQUARE_API_URL": "ftp://connect.squareup.com"}, "SQUARE_API_URL"},
		"short session":       {map[string]string{"SESSION_SECRET": "abc"}, "SESSION_SECRET"},
		"bad dev mode":        {map[string]string{"DEV_MODE": "yes"}, "DEV_MODE"},
		"bad allow private":   {map[string]string{"WEBHOOK_ALLOW_PRIVATE": "yes"}, "WEBHOOK_ALLOW_PRIVATE"},
		"bad metrics addr":    {map[string]string{"METRICS_ADDR": "9090"}, "METRICS_ADDR"},
		"metrics on public":   {map[string]string{"METRICS_ADDR": ":8080"}, "METRICS_ADDR"},
		"short metrics tok":   {map[string]string{"METRICS_TOKEN": "abc"}, "METRICS_TOKEN"},
		"bad pprof addr":      {map[string]string{"PPROF_ADDR": "localhost"}, "PPROF_ADDR"},
		"pprof on public":     {map[string]string{"PPROF_ADDR": ":8080"}, "PPROF_ADDR"},
		"pprof on metrics":    {map[string]string{"PPROF_ADDR": "127.0.0.1:9090", "METRICS_ADDR": "127.0.0.1:9090"}, "PPROF_ADDR"},
		"retention too short": {map[string]string{"RETENTION_DAYS": "3"}, "RETENTION_DAYS"},
		"retention not days":  {map[string]string{"RETENTION_DAYS": "30d"}, "RETENTION_DAYS"},
		"bad connect":         {map[string]string{"STRIPE_CONNECT": "yes please"}, "STRIPE_CONNECT"},
		"connect, no secret":  {map[string]string{"STRIPE_CONNECT": "on"}, "STRIPE_CONNECT_WEBHOOK_SECRET"},
		"connect, no key": {map[string]string{"STRIPE_CONNECT": "on", "STRIPE_SECRET_KEY": "", "STRIPE_WEBHOOK_SECRET": "",
			"STRIPE_CONNECT_WEBHOOK_SECRET": "whsec_connect"}, "STRIPE_SECRET_KEY"},
		"bad account type":                 {map[string]string{"STRIPE_CONNECT_ACCOUNT_TYPE": "premium"}, "STRIPE_CONNECT_ACCOUNT_TYPE"},
		"fee too high":                     {connectOn("PLATFORM_FEE_BPS", "5001"), "PLATFORM_FEE_BPS"},
		"fee negative":                     {connectOn("PLATFORM_FEE_BPS", "-1"), "PLATFORM_FEE_BPS"},
		"fee a percent":                    {connectOn("PLATFORM_FEE_BPS", "2.5%"), "PLATFORM_FEE_BPS"},
		"fee without connect":              {map[string]string{"PLATFORM_FEE_BPS": "250"}, "STRIPE_CONNECT=on"},
		"three connect secrets":            {connectOn("STRIPE_CONNECT_WEBHOOK_SECRET", "a,b,c"), "STRIPE_CONNECT_WEBHOOK_SECRET"},
		"connect secret is the platform's": {connectOn("STRIPE_CONNECT_WEBHOOK_SECRET", "whsec_old"), "must differ"},
		"proxy not a range":                {map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8,proxy.internal"}, "TRUSTED_PROXIES"},
		"proxy range too long":             {map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33"}, "TRUSTED_PROXIES"},
		"proxy with a zone":                {map[string]string{"TRUSTED_PROXIES": "fe80::1%eth0"}, "TRUSTED_PROXIES"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := base()
			for k, v := range tc.set {
				m[k] = v
			}
			_, err := config.Load(env(m))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.wantVar)
			for _, secret := range []string{"s3cretpw", "redispw", "twiliosecret", "sk_test_abc", "whsec_new", "whsec_old", "whsec_connect", "admin-token-0123456789"} {
				require.False(t, strings.Contains(err.Error(), secret), "error leaks a secret: %v", err)
			}
		})
	}
}

// connectOn is base()'s changes for STRIPE_CONNECT=on, with name set to value.
func connectOn(name, value string) map[string]string {
	m := map[string]string{"STRIPE_CONNECT": "on", "STRIPE_CONNECT_WEBHOOK_SECRET": "whsec_connect"}
	m[name] = value
	return m
}

func TestLoadConnect(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(base()))
	require.NoError(t, err)
	require.False(t, c.StripeConnect, "off by default: today's single-business behaviour")
	require.Equal(t, "standard", c.StripeConnectAccountType)
	require.Zero(t, c.PlatformFeeBPS)
	require.Empty(t, c.StripeConnectWebhookSecrets)

	m := base()
	for k, v := range map[string]string{
		"STRIPE_CONNECT": "on", "STRIPE_CONNECT_ACCOUNT_TYPE": "Express", "PLATFORM_FEE_BPS": "250",
		"STRIPE_CONNECT_WEBHOOK_SECRET": " whsec_connect_new , whsec_connect_old",
	} {
		m[k] = v
	}
	c, err = config.Load(env(m))
	require.NoError(t, err)
	require.True(t, c.StripeConnect)
	require.Equal(t, "express", c.StripeConnectAccountType)
	require.Equal(t, 250, c.PlatformFeeBPS)
	require.Equal(t, []string{"whsec_connect_new", "whsec_connect_old"}, c.StripeConnectWebhookSecrets)

	for _, off := range []string{"off", "0", "false", ""} {
		m := base()
		m["STRIPE_CONNECT"] = off
		c, err := config.Load(env(m))
		require.NoError(t, err, "STRIPE_CONNECT=%q", off)
		require.False(t, c.StripeConnect, "STRIPE_CONNECT=%q", off)
	}
	m = base()
	m["STRIPE_CONNECT"], m["STRIPE_CONNECT_WEBHOOK_SECRET"], m["PLATFORM_FEE_BPS"] = "on", "whsec_connect", "5000"
	c, err = config.Load(env(m))
	require.NoError(t, err, "the most a fee may be")
	require.Equal(t, config.MaxPlatformFeeBPS, c.PlatformFeeBPS)
}

// TestLoadRefusesShippedDefaultsOutsideDevMode: docker-compose.yml and scripts/dev.sh
// ship an admin token and a Stripe webhook secret anyone can read in this repository.
// They are fine for a local sandbox (DEV_MODE=1); anywhere else they would let anyone
// create shops or forge Stripe events, so the server must refuse to start with them.
func TestLoadRefusesShippedDefaultsOutsideDevMode(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ name, value string }{
		"admin token":         {"ADMIN_TOKEN", "dev-admin-token-change-me"},
		"admin token, spaced": {"ADMIN_TOKEN", "  dev-admin-token-change-me "},
		"webhook secret":      {"STRIPE_WEBHOOK_SECRET", "whsec_dev_secret"},
		"webhook secret, old": {"STRIPE_WEBHOOK_SECRET", "whsec_new,whsec_dev_secret"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := base()
			m[tc.name] = tc.value
			_, err := config.Load(env(m))
			require.Error(t, err, "%s=%q outside DEV_MODE must be refused", tc.name, tc.value)
			require.Contains(t, err.Error(), tc.name)
			require.Contains(t, err.Error(), "DEV_MODE")
			require.NotContains(t, err.Error(), strings.TrimSpace(tc.value), "the error names the variable, never its value")

			// The same value is the local sandbox's, and accepted there.
			m["DEV_MODE"] = "1"
			_, err = config.Load(env(m))
			require.NoError(t, err, "%s=%q with DEV_MODE=1", tc.name, tc.value)
		})
	}
}

func TestLoadRetention(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(base()))
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, c.Retention, "30 days by default")
	m := base()
	m["RETENTION_DAYS"] = "90"
	c, err = config.Load(env(m))
	require.NoError(t, err)
	require.Equal(t, 90*24*time.Hour, c.Retention)
}

// TestLoadInboxRetention: the inbox keeps a year by default, at least a day, and a bad
// value is named.
func TestLoadInboxRetention(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(base()))
	require.NoError(t, err)
	require.Equal(t, 365*24*time.Hour, c.InboxRetention, "365 days by default")
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{{"1", 24 * time.Hour}, {"30", 30 * 24 * time.Hour}, {"0", 0}, {"-5", 0}, {"a year", 0}, {"1.5", 0}} {
		m := base()
		m["INBOX_RETENTION_DAYS"] = tc.value
		c, err := config.Load(env(m))
		if tc.want == 0 {
			require.ErrorContains(t, err, "INBOX_RETENTION_DAYS", tc.value)
			continue
		}
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, c.InboxRetention, tc.value)
	}
}

func TestLoadDevModeDefaults(t *testing.T) {
	t.Parallel()
	m := base()
	delete(m, "TWILIO_ACCOUNT_SID")
	delete(m, "TWILIO_AUTH_TOKEN")
	delete(m, "PUBLIC_URL")
	m["DEV_MODE"] = "1"
	m["HTTP_ADDR"] = "127.0.0.1:9090"
	c, err := config.Load(env(m))
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9090", c.PublicURL)
	require.False(t, c.TwilioConfigured())
}

func TestRedisOptions(t *testing.T) {
	t.Parallel()
	o, err := config.RedisOptions("redis://:pw@127.0.0.1:6380/3")
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:6380"}, o.Addrs)
	require.Equal(t, 3, o.DB)
	require.Equal(t, "pw", o.Password)

	o, err = config.RedisOptions("redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002")
	require.NoError(t, err)
	require.True(t, o.IsClusterMode)
	require.Len(t, o.Addrs, 3)

	o, err = config.RedisOptions("redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379/mymaster?db=2")
	require.NoError(t, err)
	require.Equal(t, "mymaster", o.MasterName)
	require.Equal(t, []string{"10.0.0.1:26379", "10.0.0.2:26379"}, o.Addrs)
	require.Equal(t, 2, o.DB)

	_, err = config.RedisOptions("redis+sentinel://10.0.0.1:26379")
	require.Error(t, err)
}

// TestLoadKeys: ERASURE_KEY and SECRETS_KEY are lists of keys, newest first, required
// outside DEV_MODE with no fallback to ADMIN_TOKEN; the newest is at least 32 random
// bytes (not ADMIN_TOKEN, not the other setting's, not DEV_MODE's example), an older one
// at least 16 characters (a former ADMIN_TOKEN). A bad key is named by its variable,
// never shown, and a missing one says how a database that ran without it moves off.
func TestLoadKeys(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ERASURE_KEY", "SECRETS_KEY"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			read := func(c config.Config) [][]byte {
				if name == "ERASURE_KEY" {
					return c.ErasureKeys
				}
				return c.SecretsKeys
			}
			m := base()
			delete(m, name)
			_, err := config.Load(env(m))
			require.Error(t, err, "unset outside DEV_MODE: refused, ADMIN_TOKEN is no key")
			require.Contains(t, err.Error(), name+" is required unless DEV_MODE=1")
			require.Contains(t, err.Error(), name+"=<new key>,<ADMIN_TOKEN's value>", "it says how to move off the fallback")
			require.NotContains(t, err.Error(), m["ADMIN_TOKEN"])

			m["DEV_MODE"] = "1"
			c, err := config.Load(env(m))
			require.NoError(t, err, "DEV_MODE needs no key")
			keys := read(c)
			require.Len(t, keys, 2, "DEV_MODE's fixed key, then ADMIN_TOKEN for a sandbox from before")
			require.Equal(t, []byte(m["ADMIN_TOKEN"]), keys[1])
			require.NotEqual(t, []byte(m["ADMIN_TOKEN"]), keys[0])
			devKey := string(keys[0])
			delete(m, "DEV_MODE")
			m[name] = devKey
			_, err = config.Load(env(m))
			require.Error(t, err, "DEV_MODE's example key outside DEV_MODE")
			require.Contains(t, err.Error(), name)
			require.NotContains(t, err.Error(), devKey)

			m = base()
			newKey, oldKey := base()[name], "former-admin-token" // 18 characters: an ADMIN_TOKEN may be 16
			m[name] = " " + newKey + " , " + oldKey + " "
			c, err = config.Load(env(m))
			require.NoError(t, err)
			require.Equal(t, [][]byte{[]byte(newKey), []byte(oldKey)}, read(c), "newest first, as given")
			m[name] = newKey + "," + m["ADMIN_TOKEN"]
			_, err = config.Load(env(m))
			require.NoError(t, err, "ADMIN_TOKEN's value as an older key: the move off the fallback")

			other := map[string]string{"ERASURE_KEY": "SECRETS_KEY", "SECRETS_KEY": "ERASURE_KEY"}[name]
			for why, bad := range map[string]string{
				"short":                  "short-secret-of-31-characters-x",
				"hex of 16 bytes":        "0123456789abcdef0123456789abcdef",
				"not random":             strings.Repeat("ab", 32),
				"the admin token first":  m["ADMIN_TOKEN"] + "," + newKey,
				"a short older key":      newKey + ",tooshort",
				"too many":               strings.Repeat(newKey+",", 9) + newKey,
				"the other setting's":    base()[other],
				"the other's, as given":  base()[other] + "," + newKey,
				"the admin token itself": m["ADMIN_TOKEN"],
			} {
				m := base()
				m[name] = bad
				_, err = config.Load(env(m))
				require.Error(t, err, why)
				require.Contains(t, err.Error(), name, why)
				for _, secret := range []string{"short-secret", "tooshort", "0123456789abcdef", "abababab", m["ADMIN_TOKEN"],
					base()[other]} {
					require.NotContains(t, err.Error(), secret, why)
				}
			}
		})
	}
}

// TestLoadTrustedProxies: unset, no proxy is trusted; set, CIDRs and bare addresses (one
// host each), spaces and empty items ignored, ranges normalised.
func TestLoadTrustedProxies(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(base()))
	require.NoError(t, err)
	require.Empty(t, c.TrustedProxies, "no proxy is trusted by default")
	m := base()
	m["TRUSTED_PROXIES"] = " 10.1.2.3/8, 127.0.0.1 ,, fd00::/8,::1"
	c, err = config.Load(env(m))
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"),
		netip.MustParsePrefix("fd00::/8"), netip.MustParsePrefix("::1/128")}, c.TrustedProxies)
}

// TestEveryVariableIsDocumented: every variable Load reads has a row in the table of
// docs/configuration.md and is passed through to the server in docker-compose.yml, so a
// new setting cannot ship undocumented or unreachable from `docker compose up`.
func TestEveryVariableIsDocumented(t *testing.T) {
	t.Parallel()
	read := map[string]bool{}
	_, _ = config.Load(func(k string) string {
		read[k] = true
		return base()[k]
	})
	require.Contains(t, read, "DATABASE_URL", "the recording getenv saw Load's reads")
	page, err := os.ReadFile("../../docs/configuration.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(page), "\n| variable | default | meaning |\n")
	require.True(t, ok, "docs/configuration.md has the variables' table")
	table, _, _ = strings.Cut(table, "\n\n")
	var rows []string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "| `") {
			first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " | ")
			rows = append(rows, first)
		}
	}
	compose, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	_, server, ok := strings.Cut(string(compose), "\n  server:\n")
	require.True(t, ok, "docker-compose.yml has a server service")
	for k := range read {
		documented := false
		for _, r := range rows {
			documented = documented || strings.Contains(r, "`"+k+"`")
		}
		require.True(t, documented, "%s is read by config.Load but has no row in docs/configuration.md's table", k)
		require.Regexp(t, `(?m)^      `+k+`: `, server, "%s is not passed through in docker-compose.yml's server environment", k)
	}
}

func TestLoadSender(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(base()))
	require.NoError(t, err)
	require.False(t, c.SMSUSA2P, "off by default: nothing changes for existing shops")
	require.Empty(t, c.TwilioISVProfileSID)

	m := base()
	m["SMS_US_A2P"], m["TWILIO_ISV_PROFILE_SID"] = "Required", "BU0123456789abcdef0123456789abcdef"
	c, err = config.Load(env(m))
	require.NoError(t, err)
	require.True(t, c.SMSUSA2P)
	require.Equal(t, "BU0123456789abcdef0123456789abcdef", c.TwilioISVProfileSID)

	for name, value := range map[string]string{"SMS_US_A2P": "always", "TWILIO_ISV_PROFILE_SID": "RNabc123"} {
		m := base()
		m[name] = value
		_, err := config.Load(env(m))
		require.ErrorContains(t, err, name)
		require.NotContains(t, err.Error(), value, "the value is not echoed")
	}
}

// TestTwilioConnectionOverrides: TWILIO_CONNECTION_OVERRIDES is the fragment set on the
// inbound webhook URL in Twilio, with or without its "#"; values outside Twilio's
// documented ranges, or names Twilio does not have, are refused naming the variable.
func TestTwilioConnectionOverrides(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"rc=3&rp=all&ct=2000&rt=13000", "#rc=3&rp=all&ct=2000&rt=13000"} {
		m := base()
		m["TWILIO_CONNECTION_OVERRIDES"] = v
		c, err := config.Load(env(m))
		require.NoError(t, err, v)
		require.Equal(t, "rc=3&rp=all&ct=2000&rt=13000", c.TwilioOverrides, v)
	}
	c, err := config.Load(env(base()))
	require.NoError(t, err)
	require.Empty(t, c.TwilioOverrides)
	for _, bad := range []string{"rc=9", "ct=50", "rt=16000", "rp=sometimes", "rc=2&rc=3", "retries=3", "rc=%zz"} {
		m := base()
		m["TWILIO_CONNECTION_OVERRIDES"] = bad
		_, err := config.Load(env(m))
		require.ErrorContains(t, err, "TWILIO_CONNECTION_OVERRIDES", bad)
	}
}
