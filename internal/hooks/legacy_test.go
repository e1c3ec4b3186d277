package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/migrate"
)

// TestEventsRecordedBeforeRenderingInGo: events recorded before migration 0050 hold
// their object's stored form, not their data (the opening in the shape Postgres wrote,
// the customer under customers.Customer's frozen field names, the inbox text, the
// sender); one still waiting at the upgrade is sent with the same data the dispatcher
// of then rendered (the owners' API's rendering, pinned here as it was), and an erasure
// still finds the customer in it.
func TestEventsRecordedBeforeRenderingInGo(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: "http://127.0.0.1:9/hooks"})
	require.NoError(t, err)
	legacy := func(typ, subject string) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		// As the previous version inserted them: no rendered column.
		require.NoError(t, s.pool.QueryRow(ctx, `INSERT INTO webhook_events (shop_id, type, created_at, subject)
			VALUES ($1, $2, '2026-11-27T09:00:00Z', $3::jsonb) RETURNING id`, s.shop.ID, typ, subject).Scan(&id))
		return id
	}
	// webhook_opening_subject's shape: times as Postgres writes them, no net_cents, a
	// booking's price_cents left to the rendering.
	filled := legacy(hooks.OpeningFilled, `{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a01","shop_id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a02",
		"starts_at":"2026-11-28T15:00:00.25+00:00","duration_minutes":45,"service":"Cut","price_cents":3500,"currency":"usd",
		"status":"filled","offers_sent":4,"generation":2,"created_at":"2026-11-27T10:00:00.5+01:00","filled_at":"2026-11-27T11:00:00+00:00",
		"filled_by":{"customer_id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03","phone":"+15555550111","name":"Bea"},
		"booking":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a04","status":"pending_payment","amount_cents":3500,"payment_url":null,
			"stripe_checkout_session_id":"cs_1","application_fee_cents":100,"service":"Cut","duration_minutes":45},
		"staff":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a05","name":"Ana"},"parent_id":null}`)
	// customers.Customer as it was marshalled (TestCustomerSubjectNames pinned it).
	customer := legacy(hooks.CustomerOptedOut, `{"ID":"11111111-1111-4111-8111-111111111111","ShopID":"22222222-2222-4222-8222-222222222222",
		"Phone":"+15555550100","Name":"Ana","Language":"es","SMSOptIn":true,"OptedOutAt":"2026-11-27T09:00:00+01:00",
		"UnreachableAt":"2026-11-27T09:00:00Z","Priority":3,"CreatedAt":"2026-11-27T09:00:00Z",
		"Preferences":{"Days":[6,7],"Windows":[{"Start":540,"End":1440}],"Services":["Cut"]},
		"ErasedAt":null}`)
	optedIn := legacy(hooks.CustomerOptedIn, `{"ID":"33333333-3333-4333-8333-333333333333","ShopID":"22222222-2222-4222-8222-222222222222",
		"Phone":"+15555550101","Name":"Bo","Language":"","SMSOptIn":true,"OptedOutAt":null,"UnreachableAt":null,"Priority":0,
		"CreatedAt":"2026-11-27T09:00:00Z","Preferences":{"Days":null,"Windows":null,"Services":null,
		"StaffIDs":["0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a05"]},"ErasedAt":null}`)
	// inbox.Received.
	message := legacy(hooks.MessageReceived, `{"conversation_id":"44444444-4444-4444-8444-444444444444",
		"message_id":"55555555-5555-4555-8555-555555555555","phone":"+15555550102","customer_id":null,
		"body":"can I come at 4?","outcome":"unrecognized","at":"2026-11-27T10:00:00+01:00"}`)
	// senders.Sender, whose empty fields were left out.
	sender := legacy(hooks.SMSSenderUpdated, `{"shop_id":"22222222-2222-4222-8222-222222222222","number":"+15555550100",
		"registration":{"status":"failed","failure_reason":"brand rejected","updated_at":"2026-11-27T09:00:00Z"}}`)
	senderBare := legacy(hooks.SMSSenderUpdated, `{"shop_id":"22222222-2222-4222-8222-222222222222","number":"+15555550100",
		"messaging_service_sid":"MG1"}`)

	n, err := s.svc.Dispatch(ctx)
	require.NoError(t, err)
	require.Equal(t, 6, n)
	data := func(id uuid.UUID) string {
		t.Helper()
		var payload []byte
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT payload FROM webhook_events WHERE id = $1 AND dispatch_error IS NULL`, id).Scan(&payload))
		var body struct{ Data json.RawMessage }
		require.NoError(t, json.Unmarshal(payload, &body))
		return string(body.Data)
	}
	require.JSONEq(t, `{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a01","shop_id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a02",
		"starts_at":"2026-11-28T15:00:00Z","duration_minutes":45,"service":"Cut","price_cents":3500,"currency":"usd",
		"status":"filled","offers_sent":4,"generation":2,"created_at":"2026-11-27T09:00:00.5Z","filled_at":"2026-11-27T11:00:00Z",
		"filled_by":{"customer_id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03","phone":"+15555550111","name":"Bea"},
		"booking":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a04","status":"pending_payment","amount_cents":3500,"payment_url":null,
			"stripe_checkout_session_id":"cs_1","application_fee_cents":100,"net_cents":3400,"service":"Cut","duration_minutes":45,
			"price_cents":3500},
		"staff":{"id":"0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a05","name":"Ana"},"parent_id":null,"source":"owner","appointment_id":null}`, data(filled))
	require.JSONEq(t, `{"id":"11111111-1111-4111-8111-111111111111","phone":"+15555550100","name":"Ana","sms_opt_in":true,
		"priority":3,"opted_out":true,"created_at":"2026-11-27T09:00:00Z","status":"opted_out","opted_out_at":"2026-11-27T08:00:00Z",
		"preferences":{"days":["sat","sun"],"windows":[{"start":"09:00","end":"24:00"}],"services":["Cut"]},"language":"es",
		"possibly_reassigned_at":null,"move_up":false,"paused_until":null}`, data(customer))
	require.JSONEq(t, `{"id":"33333333-3333-4333-8333-333333333333","phone":"+15555550101","name":"Bo","sms_opt_in":true,
		"priority":0,"opted_out":false,"created_at":"2026-11-27T09:00:00Z","status":"opted_in","opted_out_at":null,
		"preferences":{"days":[],"windows":[],"services":[],"staff_ids":["0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a05"]},"language":null,
		"possibly_reassigned_at":null,"move_up":false,"paused_until":null}`, data(optedIn))
	require.JSONEq(t, `{"conversation_id":"44444444-4444-4444-8444-444444444444","message_id":"55555555-5555-4555-8555-555555555555",
		"phone":"+15555550102","customer_id":null,"body":"can I come at 4?","outcome":"unrecognized","at":"2026-11-27T09:00:00Z"}`, data(message))
	require.JSONEq(t, `{"shop_id":"22222222-2222-4222-8222-222222222222","number":"+15555550100","messaging_service_sid":null,
		"registration":{"status":"failed","brand_status":null,"campaign_status":null,"failure_reason":"brand rejected",
			"updated_at":"2026-11-27T09:00:00Z"}}`, data(sender))
	require.JSONEq(t, `{"shop_id":"22222222-2222-4222-8222-222222222222","number":"+15555550100","messaging_service_sid":"MG1",
		"registration":null}`, data(senderBare))

	// The erasure finds a customer in the old forms too: as the customer of a customer
	// event, and as the holder of an opening.
	require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return hooks.ForgetCustomer(ctx, tx, s.shop.ID, uuid.MustParse("11111111-1111-4111-8111-111111111111"), "", time.Now())
	}))
	require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return hooks.ForgetCustomer(ctx, tx, s.shop.ID, uuid.MustParse("0f8b6a56-2d0c-4a8e-9d5e-3d1d0b8f6a03"), "", time.Now())
	}))
	require.Equal(t, 2, s.count(`SELECT count(*) FROM webhook_events WHERE subject = '{}'::jsonb AND payload IS NULL AND id = ANY($1)`,
		[]uuid.UUID{customer, filled}))
	require.Equal(t, 4, s.count(`SELECT count(*) FROM webhook_events WHERE payload IS NOT NULL`))
}

// TestOldOpeningSubjectRendersAsNow: an opening event recorded by the previous
// version's SQL (webhook_record_opening and webhook_opening_subject as migrations 0016
// and 0040 made them, dropped by 0050 and made again here from their text) is sent with
// the same data as the same rows recorded now (RecordOpening, rendered in Go).
func TestOldOpeningSubjectRendersAsNow(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: "http://127.0.0.1:9/hooks"})
	require.NoError(t, err)
	all, err := migrate.All()
	require.NoError(t, err)
	fn := func(migration, name string) string {
		t.Helper()
		for _, m := range all {
			if m.Name == migration {
				def := regexp.MustCompile(`(?s)CREATE (?:OR REPLACE )?FUNCTION ` + name + `\(.*?\n\$\$;`).FindString(m.SQL)
				require.NotEmpty(t, def, "%s in %s", name, migration)
				return def
			}
		}
		t.Fatalf("no migration %s", migration)
		return ""
	}
	for _, def := range []string{fn("0040_opening_wire_subject.sql", "webhook_opening_subject"),
		fn("0016_webhook_endpoints.sql", "webhook_record_opening")} {
		_, err := s.pool.Exec(ctx, def)
		require.NoError(t, err)
	}

	// A person's opening, texted to three, held by Bea with a booking of another service.
	bea := s.customer(s.shop, "+447700900111", "Bea Smith")
	var staff, booking uuid.UUID
	require.NoError(t, s.pool.QueryRow(ctx, `INSERT INTO staff (shop_id, name, created_at, updated_at) VALUES ($1, 'Ana', now(), now())
		RETURNING id`, s.shop.ID).Scan(&staff))
	id := s.opening(s.shop, time.Now().Add(48*time.Hour).Truncate(time.Second).Add(250*time.Millisecond))
	_, err = s.pool.Exec(ctx, `UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now(), staff_id = $3 WHERE id = $1`,
		id, bea.ID, staff)
	require.NoError(t, err)
	for _, sent := range []bool{true, true, false} {
		c := s.customer(s.shop, fmt.Sprintf("+4477009002%02d", s.count(`SELECT count(*) FROM customers`)), "")
		_, err = s.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
			VALUES ($1, $2, $3, 1, 1, 'sent', now(), CASE WHEN $4 THEN now() END)`, id, c.ID, s.shop.ID, sent)
		require.NoError(t, err)
	}
	require.NoError(t, s.pool.QueryRow(ctx, `INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency,
		created_at, updated_at, application_fee_cents, stripe_checkout_session_id, service, duration_minutes, staff_id)
		VALUES ($1, $2, $3, 'pending_payment', 2500, 'gbp', now(), now(), 100, 'cs_1', 'Beard trim', 30, $4) RETURNING id`,
		id, bea.ID, s.shop.ID, staff).Scan(&booking))

	var recorded int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT webhook_record_opening(s.shop_id, ARRAY['opening.filled'], now(), to_jsonb(s), to_jsonb(b))
		FROM slot_openings s, bookings b WHERE s.id = $1 AND b.id = $2`, id, booking).Scan(&recorded))
	require.Equal(t, 1, recorded)
	require.NoError(t, hooks.RecordOpening(ctx, s.pool, s.shop.ID, hooks.OpeningFilled, time.Now(), id, booking))
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_events WHERE NOT rendered`), "the old one is marked so")

	n, err := s.svc.Dispatch(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	rows, err := s.pool.Query(ctx, `SELECT payload FROM webhook_events WHERE dispatch_error IS NULL ORDER BY seq`)
	require.NoError(t, err)
	payloads, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	require.Len(t, payloads, 2)
	var old, now struct{ Data json.RawMessage }
	require.NoError(t, json.Unmarshal(payloads[0], &old))
	require.NoError(t, json.Unmarshal(payloads[1], &now))
	require.JSONEq(t, string(now.Data), string(old.Data))
	require.Contains(t, string(now.Data), `"offers_sent":2`)
	require.Contains(t, string(now.Data), `"Beard trim"`)
	require.Contains(t, string(now.Data), `"net_cents":2400`)
	require.Contains(t, string(now.Data), `"name":"Ana"`)
	require.Contains(t, string(now.Data), `"name":"Bea Smith"`)
}
