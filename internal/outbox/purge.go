package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// purgeBatch bounds the rows one purge statement deletes, so a first purge of a large
// table never holds its locks for long.
const purgeBatch = 1000

// PurgeClaims deletes the send claims (text keys, which name bookings and message ids)
// made before `before`, and returns how many it deleted. The retention that sets
// `before` is days: long past the last retry of a text's job (hours), and past River's
// own memory of the finished job (a day), before which the same key cannot be queued
// again.
func PurgeClaims(ctx context.Context, conn db.DBTX, before time.Time) (int64, error) {
	var total int64
	for {
		n, err := queries.TextClaimPurge(ctx, conn, db.TextClaimPurgeParams{Before: before.UTC(), MaxRows: purgeBatch})
		total += n
		if err != nil {
			return total, fmt.Errorf("purge text claims: %w", err)
		}
		if n < purgeBatch {
			return total, nil
		}
	}
}
