package slots_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestDeclareTxLivesAndDiesWithItsTransaction: an opening declared in the caller's
// transaction (a cancelled appointment's freed time) exists, with its first wave and
// its source, only if that transaction commits; CancelTx withdraws it in the caller's
// transaction and says ErrNotOpen for one that is not open.
func TestDeclareTxLivesAndDiesWithItsTransaction(t *testing.T) {
	t.Parallel()
	w := newRaceWorld(t, 4)
	ctx := context.Background()
	shop := w.shop(t, "usd", shops.PaymentNone)
	appt := uuid.New()
	n := opening(2500, 48*time.Hour)
	n.Source, n.SourceID = slots.SourceAppointment, appt

	failed := errors.New("the caller's transaction fails after declaring")
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := w.slots.DeclareTx(ctx, tx, shop, n); err != nil {
			return err
		}
		return failed
	})
	require.ErrorIs(t, err, failed)
	require.Zero(t, w.count(t, `SELECT count(*) FROM slot_openings`), "no opening without its transaction")
	require.Zero(t, w.count(t, `SELECT count(*) FROM river_job WHERE kind = 'offer_wave'`), "no wave without it")

	var id uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		var err error
		id, err = w.slots.DeclareTx(ctx, tx, shop, n)
		return err
	}))
	o, err := w.slots.Get(ctx, shop.ID, id)
	require.NoError(t, err)
	require.Equal(t, slots.StatusOpen, o.Status)
	require.Equal(t, slots.SourceAppointment, o.Source)
	require.Equal(t, appt, o.SourceID)
	require.Equal(t, 1, w.count(t, `SELECT count(*) FROM river_job WHERE kind = 'offer_wave'`))

	bad := n
	bad.SourceID = uuid.Nil
	require.NoError(t, pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		_, err := w.slots.DeclareTx(ctx, tx, shop, bad)
		require.Error(t, err, "a source without its id")
		return nil
	}))

	require.NoError(t, pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		return slots.CancelTx(ctx, tx, shop.ID, id, time.Now())
	}))
	o, err = w.slots.Get(ctx, shop.ID, id)
	require.NoError(t, err)
	require.Equal(t, slots.StatusCancelled, o.Status)
	require.NoError(t, pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		require.ErrorIs(t, slots.CancelTx(ctx, tx, shop.ID, id, time.Now()), slots.ErrNotOpen)
		return nil
	}))
}
