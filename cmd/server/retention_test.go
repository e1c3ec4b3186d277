package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/config"
)

// TestPurgesKeepTheInboxOnItsOwnClock: the owner's inbox is purged on
// INBOX_RETENTION_DAYS, not RETENTION_DAYS, and every table is listed once.
func TestPurgesKeepTheInboxOnItsOwnClock(t *testing.T) {
	t.Parallel()
	cfg := config.Config{Retention: 30 * 24 * time.Hour, InboxRetention: 400 * 24 * time.Hour}
	seen := map[string]bool{}
	for _, p := range purges(cfg) {
		require.False(t, seen[p.Table], "%s listed twice", p.Table)
		seen[p.Table] = true
		if p.Table == "conversations" {
			require.Equal(t, cfg.InboxRetention, p.Keep)
			require.NotNil(t, p.Batch)
		}
	}
	require.True(t, seen["conversations"], "the inbox is purged")
}
