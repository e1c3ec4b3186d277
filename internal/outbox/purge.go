package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// PurgeClaims deletes up to limit send claims (text keys, which name bookings and
// message ids) made before `before`, and returns how many it deleted (internal/retention
// runs it until a batch is short). The retention that sets `before` is days: long past
// the last retry of a text's job (hours), and past River's own memory of the finished
// job (a day), before which the same key cannot be queued again.
func PurgeClaims(ctx context.Context, conn db.DBTX, before time.Time, limit int32) (int64, error) {
	n, err := queries.TextClaimPurge(ctx, conn, db.TextClaimPurgeParams{Before: before.UTC(), MaxRows: limit})
	if err != nil {
		return 0, fmt.Errorf("purge text claims: %w", err)
	}
	return n, nil
}
