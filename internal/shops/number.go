package shops

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/pgcode"
	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// ErrNumberTaken is a number another shop texts from.
var ErrNumberTaken = &problem.Error{Kind: problem.Conflict, Code: "sms_number_taken", Field: "sms_number",
	Message: "another shop has this SMS number"}

// SetSMSNumber makes number the shop's SMS number inside the caller's transaction: the
// number its own sender set up (internal/senders). A number another shop has is
// ErrNumberTaken.
func SetSMSNumber(ctx context.Context, q db.DBTX, shopID uuid.UUID, number string) (Shop, error) {
	if !phone.Valid(number) {
		return Shop{}, fmt.Errorf("set sms number of shop %s: %q is not E.164", shopID, phone.Mask(number))
	}
	r, err := queries.ShopSetSMSNumber(ctx, q, db.ShopSetSMSNumberParams{ID: shopID, SmsNumber: number})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Shop{}, ErrShopNotFound
	case pgcode.Unique(err):
		return Shop{}, ErrNumberTaken
	case err != nil:
		return Shop{}, fmt.Errorf("set sms number of shop %s: %w", shopID, err)
	}
	return FromRow(&r)
}
