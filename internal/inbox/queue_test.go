package inbox_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// TestQueue: the one way a text is queued. A text shown as queued is in the
// recipient's conversation exactly when its job is, once per key however often it is
// queued; a text the conversation holds already, and an alert to the owner's own
// phone, are queued without a record; a transaction that rolls back leaves neither.
func TestQueue(t *testing.T) {
	t.Parallel()
	s := newScene(t)
	ctx := context.Background()
	queue, err := river.NewClient(riverpgxv5.New(s.pool), &river.Config{})
	require.NoError(t, err)
	shop := s.shop("Cuts", "+15555550200")
	ada := s.customer(shop, "+15557320001", "Ada")
	queueIn := func(o inbox.Outgoing) bool {
		t.Helper()
		var queued bool
		require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			queued, err = inbox.Queue(ctx, tx, queue, o)
			return err
		}))
		return queued
	}
	texts := func() int { return s.count(`SELECT count(*) FROM river_job WHERE kind = '` + jobs.Text{}.Kind() + `'`) }
	records := func() int { return s.count(`SELECT count(*) FROM conversation_messages WHERE direction = 'out'`) }

	link := inbox.Outgoing{Key: "checkout_link:1", ShopID: shop.ID, From: shop.SMSNumber, To: ada.Phone, CustomerID: ada.ID,
		Body: "Pay here", At: t0}
	require.True(t, queueIn(link))
	require.Equal(t, 1, texts())
	require.Equal(t, 1, records())
	conv, err := s.inbox.List(ctx, shop.ID, inbox.Query{Status: "all"})
	require.NoError(t, err)
	require.Len(t, conv.Conversations, 1)
	require.Equal(t, &inbox.Preview{Direction: inbox.Out, Body: "Pay here", At: t0}, conv.Conversations[0].LastMessage)

	require.False(t, queueIn(link), "the same key again")
	require.Equal(t, 1, texts())
	require.Equal(t, 1, records())

	require.True(t, queueIn(inbox.Outgoing{Key: "reply:SM1", ShopID: shop.ID, From: shop.SMSNumber, To: ada.Phone,
		Body: "Taken, sorry", Shown: inbox.ShownAlready}))
	require.True(t, queueIn(inbox.Outgoing{Key: "inbox_alert:1", ShopID: shop.ID, From: shop.SMSNumber, To: "+15557329999",
		Body: "Ada wrote", Shown: inbox.ShownNowhere}))
	require.Equal(t, 3, texts())
	require.Equal(t, 1, records(), "neither is recorded again")

	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := inbox.Queue(ctx, tx, queue, inbox.Outgoing{Key: "confirmed:2", ShopID: shop.ID, From: shop.SMSNumber,
			To: ada.Phone, CustomerID: ada.ID, Body: "Booked", At: t0}); err != nil {
			return err
		}
		return context.Canceled // the caller's transaction fails after queueing
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 3, texts(), "no job without its transaction")
	require.Equal(t, 1, records(), "no record without its transaction")
}
