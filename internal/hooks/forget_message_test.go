package hooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// TestForgetCustomerEmptiesTheirTexts: an erasure empties the message.received events of
// the customer's texts in the owner's inbox, found by customer_id and, for a text from
// before they were a customer (customer_id null), by the number they had. Another
// number's texts (a customer's or a stranger's) stay as they were.
func TestForgetCustomerEmptiesTheirTexts(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: "http://127.0.0.1:9/hooks"})
	require.NoError(t, err)
	const phone, otherPhone = "+15550007391", "+15550008812"
	erased, kept := uuid.New(), uuid.New()
	record := func(customer *uuid.UUID, number string) {
		t.Helper()
		require.NoError(t, hooks.Record(ctx, s.pool, s.shop.ID, hooks.MessageReceived, time.Now(), api.MessageReceived{
			ConversationID: uuid.New(), MessageID: uuid.New(), Phone: number, CustomerID: customer,
			Body: "can I come at 4?", Outcome: "unrecognized", At: time.Now(),
		}))
	}
	record(&erased, phone)    // theirs, by customer
	record(nil, phone)        // theirs, by number: before they were a customer
	record(&kept, otherPhone) // someone else's
	record(nil, otherPhone)   // a stranger's
	require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return hooks.ForgetCustomer(ctx, tx, s.shop.ID, erased, phone, time.Now())
	}))
	require.Zero(t, s.count(`SELECT count(*) FROM webhook_events WHERE subject::text LIKE '%' || $1 || '%'`, phone[2:]))
	require.Equal(t, 2, s.count(`SELECT count(*) FROM webhook_events WHERE subject = '{}'::jsonb AND payload IS NULL`))
	require.Equal(t, 2, s.count(`SELECT count(*) FROM webhook_events WHERE subject->>'phone' = $1`, otherPhone))
}
