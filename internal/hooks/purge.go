package hooks

import (
	"context"
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// Purge deletes up to limit events recorded before `before`, with their deliveries and
// attempts, and returns how many events it deleted (internal/retention runs it until a
// batch is short, with before = now - Retention: 30 days, what an owner can look back
// on, far past the last scheduled attempt of a delivery, about three days after its
// event).
func Purge(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.WebhookEventPurge(ctx, conn, db.WebhookEventPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge webhook events: %w", err)
	}
	return n, nil
}
