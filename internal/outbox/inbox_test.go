package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// TestAnInboxTextGetsItsStatus: a text the owner's inbox shows (an owner's reply) is
// marked sent with the provider's id once the provider takes it, and not sent when the
// outbox drops it (the customer opted out since).
func TestAnInboxTextGetsItsStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, nil)
	pool := w.pool
	record := func(key string) {
		t.Helper()
		_, err := inbox.RecordOut(ctx, pool, inbox.OutboundText{ShopID: w.shop.ID, Phone: w.phone, CustomerID: w.customerID,
			Author: inbox.AuthorOwner, Body: "See you at 4!", At: time.Now(), Key: key, Status: inbox.StatusQueued})
		require.NoError(t, err)
	}
	status := func(key string) (st string, sid *string) {
		t.Helper()
		require.NoError(t, pool.QueryRow(ctx, `SELECT status, provider_sid FROM conversation_messages WHERE send_key = $1`, key).Scan(&st, &sid))
		return st, sid
	}

	record("inbox_reply:1")
	require.NoError(t, w.svc.SendText(ctx, jobs.Text{Key: "inbox_reply:1", ShopID: w.shop.ID, From: w.shop.SMSNumber, To: w.phone, Body: "See you at 4!"}))
	st, sid := status("inbox_reply:1")
	require.Equal(t, inbox.StatusSent, st)
	require.NotNil(t, sid)
	require.Equal(t, w.fake.Messages()[0].SID, *sid)

	require.NoError(t, w.customers.OptOut(ctx, w.customerID))
	record("inbox_reply:2")
	require.NoError(t, w.svc.SendText(ctx, jobs.Text{Key: "inbox_reply:2", ShopID: w.shop.ID, From: w.shop.SMSNumber, To: w.phone, Body: "Still there?"}))
	st, _ = status("inbox_reply:2")
	require.Equal(t, inbox.StatusFailed, st, "dropped: the number opted out")
}
