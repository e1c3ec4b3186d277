package book

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// Forget blanks who shopID's appointments were with, for the erasure of customer
// customerID whose number was phone ("" when unknown): their link, number and name go,
// their times stay (they are the shop's day). It runs on q, the erasure's transaction,
// and returns how many appointments it changed. A source that describes an appointment
// again afterwards brings back what it says: its connector's own data is the shop's to
// erase at the source.
func Forget(ctx context.Context, q db.DBTX, shopID, customerID uuid.UUID, phone string, at time.Time) (int64, error) {
	n, err := queries.AppointmentForget(ctx, q, db.AppointmentForgetParams{
		ShopID: shopID, CustomerID: uuid.NullUUID{UUID: customerID, Valid: customerID != uuid.Nil}, Phone: phone, Now: at.UTC(),
	})
	if err != nil {
		return 0, fmt.Errorf("forget appointments of customer %s: %w", customerID, err)
	}
	return n, nil
}
