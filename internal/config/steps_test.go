package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// run runs one of Load's steps on c with the variables env, and returns the problems
// it reported, by variable name.
func run(c *Config, load step, env map[string]string) []string {
	var names []string
	load(c, func(k string) string { return env[k] }, func(name, _ string) { names = append(names, name) })
	return names
}

// TestStepsAlone: each step reads and checks its own variables, given what earlier
// steps set.
func TestStepsAlone(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		load  step
		start Config
		env   map[string]string
		bad   []string
		check func(t *testing.T, c Config)
	}{
		"listeners default": {load: (*Config).loadListeners, check: func(t *testing.T, c Config) {
			require.Equal(t, ":8080", c.HTTPAddr)
		}},
		"metrics on the public listener": {load: (*Config).loadListeners,
			env: map[string]string{"HTTP_ADDR": ":9090", "METRICS_ADDR": ":9090"}, bad: []string{"METRICS_ADDR"}},
		"public URL made in DEV_MODE": {load: (*Config).loadPublicURL, start: Config{DevMode: true, HTTPAddr: ":8080"},
			check: func(t *testing.T, c Config) { require.Equal(t, "http://localhost:8080", c.PublicURL) }},
		"public URL required outside DEV_MODE": {load: (*Config).loadPublicURL, start: Config{HTTPAddr: ":8080"},
			bad: []string{"PUBLIC_URL"}},
		"retention default": {load: (*Config).loadRetention, check: func(t *testing.T, c Config) {
			require.Equal(t, DefaultRetentionDays, int(c.Retention.Hours()/24))
			require.Equal(t, DefaultInboxRetentionDays, int(c.InboxRetention.Hours()/24))
		}},
		"retention too short": {load: (*Config).loadRetention, env: map[string]string{"RETENTION_DAYS": "3"},
			bad: []string{"RETENTION_DAYS"}},
		"shipped secret refused": {load: (*Config).refuseShippedDefaults, start: Config{AdminToken: shippedDefaults["ADMIN_TOKEN"]},
			bad: []string{"ADMIN_TOKEN"}},
		"shipped secret in DEV_MODE": {load: (*Config).refuseShippedDefaults,
			start: Config{DevMode: true, AdminToken: shippedDefaults["ADMIN_TOKEN"]}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := tc.start
			require.Equal(t, tc.bad, run(&c, tc.load, tc.env))
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}
