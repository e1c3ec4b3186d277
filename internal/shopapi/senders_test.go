package shopapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/senders"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// newSenderEnv is an env whose shops can get their own sender from a fake Twilio.
func newSenderEnv(t *testing.T, cfg senders.Config) (*env, *twiliofake.Server) {
	t.Helper()
	fake := twiliofake.New(t)
	tw, err := twilio.New(twilio.Config{AccountSID: twiliofake.TestAccountSID, AuthToken: twiliofake.TestAuthToken, APIURL: fake.URL()})
	require.NoError(t, err)
	rdb, prefix := redistest.New(t)
	cfg.InboundURL, cfg.StatusCallbackURL = publicURL+"/webhooks/twilio/sms", publicURL+"/webhooks/twilio/status"
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		h.Senders = senders.New(pool, queue, tw, tw, pacing.New(rdb, prefix), cfg)
	})
	return e, fake
}

var registration = map[string]any{
	"business_name": "Fade Street Barbers LLC", "business_type": "private_profit", "ein": "12-3456789",
	"website": "https://fade.example.com",
	"address": map[string]any{"street": "1 Congress Ave", "city": "Austin", "region": "TX", "postal_code": "78701", "country": "US"},
	"contact": map[string]any{"first_name": "Sam", "last_name": "Lee", "email": "sam@example.com", "phone": "+15125550142"},
}

func TestSenderNumberRoute(t *testing.T) {
	t.Parallel()
	e, fake := newSenderEnv(t, senders.Config{})
	id, key := e.shop("+15555550170")
	path := "/api/shops/" + id + "/sms/number"

	r := e.do(http.MethodGet, "/api/shop", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, map[string]any{"number": "+15555550170", "messaging_service_sid": nil, "registration": nil}, r.body["sms_sender"])

	requireError(t, e.do(http.MethodPost, path, key, map[string]any{}), http.StatusUnauthorized, "unauthorized")
	requireError(t, e.do(http.MethodPost, path, adminToken, map[string]any{"phone_number": "+15125559999"}),
		http.StatusUnprocessableEntity, "invalid_phone_number")

	first := e.doKeyed(adminToken, "buy-1", http.MethodPost, path, map[string]any{"area_code": "737"})
	require.Equal(t, http.StatusCreated, first.status, first.raw)
	sender := first.body["sms_sender"].(map[string]any)
	require.Regexp(t, `^\+1737555`, sender["number"])
	require.Regexp(t, `^MG[0-9a-f]{32}$`, sender["messaging_service_sid"])
	require.Equal(t, sender["number"], first.body["sms_number"])

	// The feed's address is a credential: the first answer has it, the answer kept for
	// retries does not (GET /api/shop gives it), and the retry is the first answer
	// without it.
	feed, _ := first.body["calendar_url"].(string)
	require.Contains(t, feed, "/calendar/", first.raw)
	require.Zero(t, e.queryInt(`SELECT count(*) FROM idempotency_keys WHERE position(convert_to($1, 'UTF8') IN body) > 0`, feed),
		"the answer kept for retries holds the calendar address")
	again := e.doKeyed(adminToken, "buy-1", http.MethodPost, path, map[string]any{"area_code": "737"})
	require.Equal(t, http.StatusCreated, again.status)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, "", again.body["calendar_url"])
	again.body["calendar_url"] = feed
	require.Equal(t, first.body, again.body, "the first answer but the address")
	requireError(t, e.do(http.MethodPost, path, adminToken, map[string]any{"area_code": "737"}), http.StatusConflict, "sender_exists")
	require.Equal(t, 1, fake.CallCount("CreateIncomingPhoneNumber"), "bought once")

	for _, view := range []resp{e.do(http.MethodGet, "/api/shop", key, nil), e.do(http.MethodGet, "/api/shops/"+id, adminToken, nil)} {
		require.Equal(t, http.StatusOK, view.status, view.raw)
		require.Equal(t, sender, view.body["sms_sender"])
	}
	requireError(t, e.do(http.MethodGet, "/api/shops/"+id, key, nil), http.StatusUnauthorized, "unauthorized")
}

func TestRegistrationRoute(t *testing.T) {
	t.Parallel()
	e, _ := newSenderEnv(t, senders.Config{})
	id, key := e.shop("+15555550171")
	path := "/api/shop/sms/registration"

	requireError(t, e.do(http.MethodPost, path, key, registration), http.StatusConflict, "no_sender")
	r := e.do(http.MethodPost, "/api/shops/"+id+"/sms/number", adminToken, map[string]any{})
	require.Equal(t, http.StatusCreated, r.status, r.raw)

	bad := map[string]any{}
	for k, v := range registration {
		bad[k] = v
	}
	bad["contact"] = map[string]any{"first_name": "Sam", "last_name": "Lee", "email": "sam", "phone": "+15125550142"}
	r = e.do(http.MethodPost, path, key, bad)
	requireError(t, r, http.StatusUnprocessableEntity, "invalid_contact_email")
	require.Equal(t, "contact.email", r.errFieldName())
	delete(bad, "ein")
	r = e.do(http.MethodPost, path, key, bad)
	require.Equal(t, "ein", r.errFieldName(), r.raw)

	r = e.do(http.MethodPost, path, key, registration)
	require.Equal(t, http.StatusAccepted, r.status, r.raw)
	require.Equal(t, "submitted", r.body["registration"].(map[string]any)["status"])
	requireError(t, e.do(http.MethodPost, path, key, registration), http.StatusConflict, "registration_underway")

	r = e.do(http.MethodGet, "/api/shop", key, nil)
	reg := r.body["sms_sender"].(map[string]any)["registration"].(map[string]any)
	require.Equal(t, "submitted", reg["status"])
	require.Nil(t, reg["brand_status"])
	require.Equal(t, 1, e.queryInt("SELECT count(*) FROM river_job WHERE kind = 'sms_registration'"), "the job is enqueued with it")
}

// TestRequiredRegistrationRefusesOpenings: with SMS_US_A2P=required a shop texting from a
// US local number without a verified campaign declares nothing; others are unaffected.
func TestRequiredRegistrationRefusesOpenings(t *testing.T) {
	t.Parallel()
	e, _ := newSenderEnv(t, senders.Config{RequireUSA2P: true})
	_, us := e.shop("+15125550172")
	r := e.do(http.MethodPost, "/api/openings", us, validOpening())
	requireError(t, r, http.StatusConflict, "sender_not_registered")
	_, uk := e.shop("+447700900172")
	e.opening(uk)
	_, tollFree := e.shop("+18885550172")
	e.opening(tollFree)

	e2, _ := newSenderEnv(t, senders.Config{})
	_, off := e2.shop("+15125550173")
	e2.opening(off)
}

// TestSenderEventsAreRecordedAndDocumented: setting up the sender and submitting the
// registration each record an sms_sender.updated event for a subscribed endpoint, and
// the event's data, as it is stored rendered, matches the document's webhooks.
func TestSenderEventsAreRecordedAndDocumented(t *testing.T) {
	t.Parallel()
	e, _ := newSenderEnv(t, senders.Config{})
	id, key := e.shop("+15555550174")
	r := e.do(http.MethodPost, "/api/webhook_endpoints", key, map[string]any{
		"url": "https://crm.example.com/hooks", "enabled_events": []string{"sms_sender.updated"}})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, http.StatusCreated, e.do(http.MethodPost, "/api/shops/"+id+"/sms/number", adminToken, map[string]any{}).status)
	require.Equal(t, http.StatusAccepted, e.do(http.MethodPost, "/api/shop/sms/registration", key, registration).status)

	rows, err := e.pool.Query(t.Context(), "SELECT subject FROM webhook_events WHERE shop_id = $1 AND type = 'sms_sender.updated' ORDER BY created_at", id)
	require.NoError(t, err)
	var subjects [][]byte
	for rows.Next() {
		var b []byte
		require.NoError(t, rows.Scan(&b))
		subjects = append(subjects, b)
	}
	require.NoError(t, rows.Err())
	require.Len(t, subjects, 2, "set up, then submitted")
	for i, subject := range subjects {
		data := json.RawMessage(subject)
		b, err := json.Marshal(map[string]any{"id": "evt_0123456789abcdef0123456789abcdef", "type": "sms_sender.updated",
			"created_at": "2026-11-27T19:00:00Z", "timestamp": "2026-11-27T19:00:00Z", "data": data})
		require.NoError(t, err)
		var v any
		require.NoError(t, json.Unmarshal(b, &v))
		require.NoError(t, webhookSchema(t, "sms_sender.updated").VisitJSON(v, openapi3.EnableJSONSchema2020()), "%s", b)
		d := v.(map[string]any)["data"].(map[string]any)
		require.Equal(t, id, d["shop_id"])
		if i == 1 {
			require.Equal(t, "submitted", d["registration"].(map[string]any)["status"])
		} else {
			require.Nil(t, d["registration"])
		}
	}
}
