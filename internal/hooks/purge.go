package hooks

import (
	"context"
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// purgeBatch bounds the rows one purge statement deletes, so a first purge of a large
// table never holds its locks for long.
const purgeBatch = 1000

// Purge deletes the events recorded before `before`, with their deliveries and attempts,
// and returns how many events it deleted. The retention is Retention (30 days): what an
// owner can look back on, far past the last attempt of a delivery (about a day and a
// half after its event).
func Purge(ctx context.Context, conn db.DBTX, before time.Time) (int64, error) {
	var total int64
	for {
		n, err := queries.WebhookEventPurge(ctx, conn, db.WebhookEventPurgeParams{Before: before.UTC(), MaxRows: purgeBatch})
		total += n
		if err != nil {
			return total, fmt.Errorf("purge webhook events: %w", err)
		}
		if n < purgeBatch {
			return total, nil
		}
	}
}
