package customers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// Export is one download of the customer list with whole phone numbers, as the owner
// reads it back: when, from which browser, and how many customers it held (-1: the
// download did not finish).
type Export struct {
	ID        uuid.UUID
	At        time.Time
	UserAgent string
	Customers int
}

// maxUserAgent is how much of a browser's User-Agent an export keeps.
const maxUserAgent = 200

// StartExport records that the shop's customer list is being downloaded whole, before
// the first line is sent: an export that fails halfway is on the record too.
func (s *Service) StartExport(ctx context.Context, shopID uuid.UUID, at time.Time, userAgent string) (uuid.UUID, error) {
	ua := strings.ToValidUTF8(userAgent, "?")
	if len(ua) > maxUserAgent {
		ua = strings.ToValidUTF8(ua[:maxUserAgent], "")
	}
	id, err := queries.CustomerExportStart(ctx, s.pool, db.CustomerExportStartParams{ShopID: shopID, At: at.UTC(), UserAgent: ua})
	if err != nil {
		return uuid.Nil, fmt.Errorf("record customer export: %w", err)
	}
	return id, nil
}

// FinishExport records how many customers the export id held once it was sent whole.
func (s *Service) FinishExport(ctx context.Context, shopID, id uuid.UUID, n int) error {
	if err := queries.CustomerExportFinish(ctx, s.pool, db.CustomerExportFinishParams{ID: id, ShopID: shopID, Customers: pgtype.Int4{Int32: int32(n), Valid: true}}); err != nil {
		return fmt.Errorf("record customer export: %w", err)
	}
	return nil
}

// Exports lists the shop's newest max exports, newest first.
func (s *Service) Exports(ctx context.Context, shopID uuid.UUID, max int) ([]Export, error) {
	rows, err := queries.CustomerExportList(ctx, s.pool, db.CustomerExportListParams{ShopID: shopID, MaxRows: int32(max)})
	if err != nil {
		return nil, fmt.Errorf("list customer exports: %w", err)
	}
	out := make([]Export, len(rows))
	for i, r := range rows {
		n := -1
		if r.Customers.Valid {
			n = int(r.Customers.Int32)
		}
		out[i] = Export{ID: r.ID, At: r.At, UserAgent: r.UserAgent, Customers: n}
	}
	return out, nil
}
