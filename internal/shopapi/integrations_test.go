package shopapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/calendar"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// TestWebhookEndpointsAPI: create (the secret shown once, not cached), list, read,
// change, rotate the secret, delete; bad input is a 422 naming its field.
func TestWebhookEndpointsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	r := e.do(http.MethodPost, "/api/webhook_endpoints", key, map[string]any{
		"url": "https://crm.example.com/hooks", "description": "CRM", "enabled_events": []string{"opening.filled", "booking.confirmed"},
	})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	id := r.body["id"].(string)
	require.Equal(t, "/api/webhook_endpoints/"+id, r.header.Get("Location"))
	secret := r.body["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"))
	require.Equal(t, []any{"booking.confirmed", "opening.filled"}, r.body["enabled_events"])
	require.Equal(t, false, r.body["disabled"])
	require.Nil(t, r.body["disabled_reason"])

	r = e.do(http.MethodGet, "/api/webhook_endpoints/"+id, key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.NotContains(t, r.raw, secret, "the secret is shown once")
	require.NotContains(t, r.body, "secret")
	r = e.do(http.MethodGet, "/api/webhook_endpoints", key, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Len(t, r.body["webhook_endpoints"], 1)
	require.NotContains(t, r.raw, secret)

	r = e.do(http.MethodPatch, "/api/webhook_endpoints/"+id, key, map[string]any{"disabled": true, "enabled_events": []string{"*"}})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, true, r.body["disabled"])
	require.Equal(t, "disabled by the owner", r.body["disabled_reason"])
	require.Equal(t, []any{"*"}, r.body["enabled_events"])
	require.Equal(t, "https://crm.example.com/hooks", r.body["url"], "fields left out stay")
	r = e.do(http.MethodPatch, "/api/webhook_endpoints/"+id, key, map[string]any{"disabled": false})
	require.Equal(t, false, r.body["disabled"])
	require.Nil(t, r.body["disabled_reason"])

	r = e.do(http.MethodPost, "/api/webhook_endpoints/"+id+"/rotate_secret", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	require.NotEqual(t, secret, r.body["secret"])
	require.NotNil(t, r.body["previous_secret_expires_at"], "the old secret signs for 24 h more")

	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"url": "ftp://example.com/"}, "url"},
		{map[string]any{"url": ""}, "url"},
		{map[string]any{"url": "https://x.example.com/", "enabled_events": []string{"opening.exploded"}}, "enabled_events"},
		{map[string]any{"url": "https://x.example.com/", "description": strings.Repeat("x", 501)}, "description"},
	} {
		r := e.do(http.MethodPost, "/api/webhook_endpoints", key, tc.body)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, r.raw)
		require.Equal(t, tc.field, r.errFieldName(), r.raw)
	}
	r = e.do(http.MethodPatch, "/api/webhook_endpoints/"+id, key, map[string]any{"url": nil})
	requireError(t, r, http.StatusUnprocessableEntity, "invalid_url")
	r = e.do(http.MethodPost, "/api/webhook_endpoints", key, `{"url": 5}`)
	requireError(t, r, http.StatusBadRequest, "bad_json")

	r = e.do(http.MethodDelete, "/api/webhook_endpoints/"+id, key, nil)
	require.Equal(t, http.StatusNoContent, r.status)
	requireError(t, e.do(http.MethodGet, "/api/webhook_endpoints/"+id, key, nil), http.StatusNotFound, "webhook_endpoint_not_found")
	requireError(t, e.do(http.MethodGet, "/api/webhook_endpoints/not-a-uuid", key, nil), http.StatusNotFound, "webhook_endpoint_not_found")
}

// TestWebhookEndpointsAreTenantIsolated: another shop's endpoint and its deliveries
// answer 404 to every route, and its list is empty.
func TestWebhookEndpointsAreTenantIsolated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.shop("+15555550100")
	_, b := e.shop("+15555550101")
	r := e.do(http.MethodPost, "/api/webhook_endpoints", a, map[string]any{"url": "https://a.example.com/"})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	id := r.body["id"].(string)
	d := uuid.NewString()
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/api/webhook_endpoints/" + id},
		{http.MethodPatch, "/api/webhook_endpoints/" + id},
		{http.MethodDelete, "/api/webhook_endpoints/" + id},
		{http.MethodPost, "/api/webhook_endpoints/" + id + "/rotate_secret"},
		{http.MethodGet, "/api/webhook_endpoints/" + id + "/deliveries"},
		{http.MethodGet, "/api/webhook_endpoints/" + id + "/deliveries/" + d},
		{http.MethodPost, "/api/webhook_endpoints/" + id + "/deliveries/" + d + "/retry"},
	} {
		var body any
		if tc.method == http.MethodPatch {
			body = map[string]any{"description": "mine now"}
		}
		r := e.do(tc.method, tc.path, b, body)
		require.Equal(t, http.StatusNotFound, r.status, "%s %s: %s", tc.method, tc.path, r.raw)
		require.Equal(t, "webhook_endpoint_not_found", r.errCode())
	}
	r = e.do(http.MethodGet, "/api/webhook_endpoints", b, nil)
	require.Empty(t, r.body["webhook_endpoints"])
	r = e.do(http.MethodGet, "/api/webhook_endpoints/"+id, a, nil)
	require.Equal(t, "", r.body["description"], "B's PATCH changed nothing")
	requireError(t, e.do(http.MethodGet, "/api/webhook_endpoints", "", nil), http.StatusUnauthorized, "unauthorized")
}

// webhookSchema is the OpenAPI document's schema for events of type typ.
func webhookSchema(t *testing.T, typ string) *openapi3.Schema {
	t.Helper()
	doc, _ := spec(t)
	item := doc.Webhooks[typ]
	require.NotNil(t, item, "api/openapi.json has no webhook %s", typ)
	media := item.Post.RequestBody.Value.Content.Get("application/json")
	require.NotNil(t, media)
	return media.Schema.Value
}

// checkEvent validates an event's body against the document's webhooks section.
func checkEvent(t *testing.T, ev hookstest.Event) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(ev.Body, &v))
	require.NoError(t, webhookSchema(t, ev.Type).VisitJSON(v, openapi3.EnableJSONSchema2020()),
		"%s does not match api/openapi.json's webhooks: %s", ev.Type, ev.Body)
}

// TestEveryEventTypeIsDocumented: the document's webhooks section has each type, and its
// schemas are not vacuous (an event of one type does not pass as another).
func TestEveryEventTypeIsDocumented(t *testing.T) {
	t.Parallel()
	doc, _ := spec(t)
	require.Len(t, doc.Webhooks, len(hooks.Types))
	for _, typ := range hooks.Types {
		webhookSchema(t, typ)
	}
	ev := map[string]any{"id": "evt_0123456789abcdef0123456789abcdef", "type": "customer.opted_in",
		"created_at": "2026-11-22T09:00:00Z", "timestamp": "2026-11-22T09:00:00Z", "data": map[string]any{}}
	require.Error(t, webhookSchema(t, "opening.declared").VisitJSON(ev, openapi3.EnableJSONSchema2020()))
	require.Error(t, webhookSchema(t, "customer.opted_in").VisitJSON(ev, openapi3.EnableJSONSchema2020()), "data must be a customer")
}

// TestEventsShowObjectsAsTheAPIDoes: events reach a real receiver, verify with the
// Standard Webhooks library, match the document's webhooks section, and carry the
// opening or customer exactly as GET shows it — as it stood at the event: a later change
// shows in GET, not in the event already recorded.
func TestEventsShowObjectsAsTheAPIDoes(t *testing.T) {
	t.Parallel()
	var svc *hooks.Service
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		h.Hooks = hooks.New(pool, queue, hooks.Config{DevMode: true, AllowPrivate: true, PollEvery: 20 * time.Millisecond})
		svc = h.Hooks
	})
	shopID, key := e.shop("+15555550100")
	rcv := hookstest.NewReceiver(t)
	r := e.do(http.MethodPost, "/api/webhook_endpoints", key, map[string]any{"url": rcv.URL()})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	rcv.SetSecrets(r.body["secret"].(string))
	hookstest.Deliver(t, e.pool, svc, hookstest.RiverConfig{})
	ctx := context.Background()
	shop := uuid.MustParse(shopID)

	opening := e.opening(key)
	id := uuid.MustParse(opening["id"].(string))
	// Declaring recorded opening.declared in the declaration's transaction.
	declaredGET := e.do(http.MethodGet, "/api/openings/"+id.String(), key, nil).raw

	// A YES, as the claim makes it, in SQL here (the real claim records opening.filled in its own statement).
	cust := e.customer(key, map[string]any{"phone": "+15555550111", "name": "Bea Smith", "sms_opt_in": true, "language": "es"})
	var booking uuid.UUID
	require.NoError(t, e.pool.QueryRow(ctx, `WITH f AS (UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now(), updated_at = now()
		WHERE id = $1 RETURNING id) INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
		SELECT id, $2, $3, 'pending_payment', 3500, 'usd', now(), now() FROM f RETURNING id`, id, cust, shop).Scan(&booking))
	require.NoError(t, hooks.RecordOpening(ctx, e.pool, shop, hooks.OpeningFilled, time.Now(), id, booking))
	filledGET := e.do(http.MethodGet, "/api/openings/"+id.String(), key, nil).raw

	require.NoError(t, e.h.Customers.OptOut(ctx, uuid.MustParse(cust)))
	customerGET := e.do(http.MethodGet, "/api/customers/"+cust, key, nil).raw

	// Later the booking is paid: GET shows it; the opening.filled event keeps the hold.
	_, err := e.pool.Exec(ctx, `UPDATE bookings SET status = 'confirmed', payment_url = 'https://pay.example/x' WHERE id = $1`, booking)
	require.NoError(t, err)
	require.NoError(t, hooks.RecordOpening(ctx, e.pool, shop, hooks.BookingConfirmed, time.Now(), id, booking))
	confirmedGET := e.do(http.MethodGet, "/api/openings/"+id.String(), key, nil).raw

	// Deliveries run side by side: they may arrive in any order; the outbox has theirs.
	got := hookstest.InRecordedOrder(t, e.pool, rcv.WaitFor(t, 4, 30*time.Second))
	require.Empty(t, rcv.Unverified())
	require.Equal(t, []string{hooks.OpeningDeclared, hooks.OpeningFilled, hooks.CustomerOptedOut, hooks.BookingConfirmed}, hookstest.Types(got))
	for _, ev := range got {
		checkEvent(t, ev)
	}
	require.JSONEq(t, declaredGET, string(got[0].Data))
	require.JSONEq(t, filledGET, string(got[1].Data))
	// The customer's event is the API's customer without its stats (figures computed
	// when asked, not a state an event keeps).
	var customerWant map[string]any
	require.NoError(t, json.Unmarshal([]byte(customerGET), &customerWant))
	require.Contains(t, customerWant, "stats")
	delete(customerWant, "stats")
	wantJSON, err := json.Marshal(customerWant)
	require.NoError(t, err)
	require.JSONEq(t, string(wantJSON), string(got[2].Data))
	require.JSONEq(t, confirmedGET, string(got[3].Data))
	var filled map[string]any
	require.NoError(t, json.Unmarshal(got[1].Data, &filled))
	require.Equal(t, "pending_payment", filled["booking"].(map[string]any)["status"], "the state at the event")
	require.Equal(t, "Bea Smith", filled["filled_by"].(map[string]any)["name"])
	var optedOut map[string]any
	require.NoError(t, json.Unmarshal(got[2].Data, &optedOut))
	require.Equal(t, "es", optedOut["language"], "the customer's language travels with their events")

	// The owner reads the deliveries and sends one again.
	eps := e.do(http.MethodGet, "/api/webhook_endpoints", key, nil).body["webhook_endpoints"].([]any)
	epID := eps[0].(map[string]any)["id"].(string)
	var list map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for {
		list = e.do(http.MethodGet, "/api/webhook_endpoints/"+epID+"/deliveries?status=succeeded", key, nil).body
		if len(list["deliveries"].([]any)) == 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	deliveries := list["deliveries"].([]any)
	require.Len(t, deliveries, 4)
	last := deliveries[0].(map[string]any)
	require.Equal(t, got[3].ID, last["event_id"], "newest first")
	r = e.do(http.MethodGet, "/api/webhook_endpoints/"+epID+"/deliveries/"+last["id"].(string), key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	log := r.body["attempt_log"].([]any)
	require.Len(t, log, 1)
	require.EqualValues(t, 204, log[0].(map[string]any)["status_code"])
	require.Equal(t, got[3].ID, r.body["payload"].(map[string]any)["id"])
	r = e.do(http.MethodPost, "/api/webhook_endpoints/"+epID+"/deliveries/"+last["id"].(string)+"/retry", key, nil)
	require.Equal(t, http.StatusAccepted, r.status, r.raw)
	again := rcv.WaitFor(t, 5, 20*time.Second)[4]
	require.Equal(t, got[3].ID, again.ID)
	require.Equal(t, got[3].Body, again.Body)
}

// TestIdempotentDeclareUnderConcurrentRetries: many concurrent POSTs of one opening with
// one Idempotency-Key (a client retrying after timeouts) make exactly one opening, with
// one first wave: the others are told to wait (409) or get the first answer again.
func TestIdempotentDeclareUnderConcurrentRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	body, err := json.Marshal(validOpening())
	require.NoError(t, err)
	post := func() (int, http.Header, string) {
		req, err := http.NewRequest(http.MethodPost, e.url+"/api/openings", bytes.NewReader(body))
		if err != nil {
			return 0, nil, err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", "declare-3f9c")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err.Error()
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(raw)
	}
	const n = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	var created []string
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, _, raw := post()
			mu.Lock()
			defer mu.Unlock()
			statuses[status]++
			if status == http.StatusCreated {
				created = append(created, raw)
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, n, statuses[http.StatusCreated]+statuses[http.StatusConflict], "only 201 and 409: %v", statuses)
	require.GreaterOrEqual(t, statuses[http.StatusCreated], 1)
	for _, raw := range created {
		require.JSONEq(t, created[0], raw, "every 201 is the first answer")
	}
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM slot_openings`), "one opening")
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave'`), "one first wave: texted once")

	// A retry after the first finished: the same answer, marked as replayed.
	status, h, raw := post()
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, "true", h.Get("Idempotent-Replayed"))
	require.JSONEq(t, created[0], raw)
	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &o))
	require.Equal(t, "/api/openings/"+o["id"].(string), h.Get("Location"))
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM slot_openings`))
}

// TestIdempotencyKeyRules: another request with a used key is 422; a bad key is 400;
// keys are the shop's; the other creating POSTs replay too (one endpoint, whose secret
// the replay leaves out: TestWebhookEndpointSecretShownOnce); requests without a key are
// not affected.
func TestIdempotencyKeyRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.shop("+15555550100")
	_, b := e.shop("+15555550101")
	with := func(key, idem, method, path string, body any) resp {
		t.Helper()
		j, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequest(method, e.url+path, bytes.NewReader(j))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", idem)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		checkAgainstSpec(t, req, res.StatusCode, res.Header, raw)
		r := resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
		require.NoError(t, json.Unmarshal(raw, &r.body), string(raw))
		return r
	}
	bea := map[string]any{"phone": "+15555550111", "name": "Bea", "sms_opt_in": true}
	first := with(a, "cust-1", http.MethodPost, "/api/customers", bea)
	require.Equal(t, http.StatusCreated, first.status, first.raw)
	again := with(a, "cust-1", http.MethodPost, "/api/customers", bea)
	require.Equal(t, http.StatusCreated, again.status, "not a 409 phone_exists: the first answer again")
	require.JSONEq(t, first.raw, again.raw)
	other := with(a, "cust-1", http.MethodPost, "/api/customers", map[string]any{"phone": "+15555550112"})
	requireError(t, other, http.StatusUnprocessableEntity, "idempotency_key_reused")
	requireError(t, with(a, "cust-1", http.MethodPost, "/api/openings", validOpening()), http.StatusUnprocessableEntity, "idempotency_key_reused")
	requireError(t, with(a, strings.Repeat("k", 256), http.MethodPost, "/api/customers", bea), http.StatusBadRequest, "invalid_idempotency_key")
	requireError(t, with(a, "clé-1", http.MethodPost, "/api/customers", bea), http.StatusBadRequest, "invalid_idempotency_key")
	inB := with(b, "cust-1", http.MethodPost, "/api/customers", bea)
	require.Equal(t, http.StatusCreated, inB.status, "keys are the shop's")
	require.NotEqual(t, first.body["id"], inB.body["id"])

	// A 4xx is the request's answer, kept like the others.
	dup := with(a, "cust-2", http.MethodPost, "/api/customers", bea)
	requireError(t, dup, http.StatusConflict, "phone_exists")
	requireError(t, with(a, "cust-2", http.MethodPost, "/api/customers", bea), http.StatusConflict, "phone_exists")

	ep := with(a, "ep-1", http.MethodPost, "/api/webhook_endpoints", map[string]any{"url": "https://a.example.com/"})
	require.Equal(t, http.StatusCreated, ep.status, ep.raw)
	epAgain := with(a, "ep-1", http.MethodPost, "/api/webhook_endpoints", map[string]any{"url": "https://a.example.com/"})
	require.Equal(t, ep.body["id"], epAgain.body["id"], "one endpoint")
	require.NotContains(t, epAgain.body, "secret", "shown once, in the first answer")
	require.Equal(t, true, epAgain.body["secret_shown_once"])
	require.Equal(t, "no-store", epAgain.header.Get("Cache-Control"))
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM webhook_endpoints`))

	// The CSV import, keyed: one import.
	importWith := func(idem string) resp {
		req, err := http.NewRequest(http.MethodPost, e.url+"/api/customers/import", strings.NewReader("phone,name\n+15555550150,Cy\n"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "text/csv")
		req.Header.Set("Authorization", "Bearer "+a)
		req.Header.Set("Idempotency-Key", idem)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		r := resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
		require.NoError(t, json.Unmarshal(raw, &r.body), string(raw))
		return r
	}
	imp := importWith("import-1")
	require.Equal(t, http.StatusOK, imp.status, imp.raw)
	require.EqualValues(t, 1, imp.body["created"])
	imp2 := importWith("import-1")
	require.JSONEq(t, imp.raw, imp2.raw, "the first report again, not \"unchanged\"")
	require.Equal(t, "true", imp2.header.Get("Idempotent-Replayed"))

	// Without a key nothing changes: a second POST is a second request.
	r := e.do(http.MethodPost, "/api/customers", a, bea)
	requireError(t, r, http.StatusConflict, "phone_exists")
}

// doKeyed sends a JSON request with an Idempotency-Key, checks the answer against the
// OpenAPI document and decodes it.
func (e *env) doKeyed(key, idem, method, path string, body any) resp {
	e.t.Helper()
	j, err := json.Marshal(body)
	require.NoError(e.t, err)
	req, err := http.NewRequest(method, e.url+path, bytes.NewReader(j))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", idem)
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	checkAgainstSpec(e.t, req, res.StatusCode, res.Header, raw)
	r := resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
	require.NoError(e.t, json.Unmarshal(raw, &r.body), string(raw))
	return r
}

// TestWebhookEndpointSecretShownOnce: an endpoint's signing secret is in the answer that
// made it and nowhere else. A retry with the same Idempotency-Key gets the first answer
// without the secret, saying it was shown once, before and after the secret is rotated
// and the endpoint deleted; the answer kept for retries holds no copy of it.
func TestWebhookEndpointSecretShownOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	create := map[string]any{"url": "https://crm.example.com/hooks", "description": "CRM"}
	first := e.doKeyed(key, "ep-once", http.MethodPost, "/api/webhook_endpoints", create)
	require.Equal(t, http.StatusCreated, first.status, first.raw)
	secret, _ := first.body["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"), first.raw)
	require.NotContains(t, first.body, "secret_shown_once", "the first answer shows it")
	id := first.body["id"].(string)
	require.Zero(t, e.queryInt(`SELECT count(*) FROM idempotency_keys WHERE position(convert_to($1, 'UTF8') IN body) > 0`, secret),
		"the answer kept for retries holds the secret")

	replayed := func(when string) {
		t.Helper()
		again := e.doKeyed(key, "ep-once", http.MethodPost, "/api/webhook_endpoints", create)
		require.Equal(t, http.StatusCreated, again.status, again.raw)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"), when)
		require.Equal(t, "/api/webhook_endpoints/"+id, again.header.Get("Location"), when)
		require.NotContains(t, again.raw, "whsec_", "%s: a replay shows no secret", when)
		require.NotContains(t, again.body, "secret", when)
		require.Equal(t, true, again.body["secret_shown_once"], "%s: a replay says why the secret is missing", when)
		want := map[string]any{}
		for k, v := range first.body {
			want[k] = v
		}
		delete(want, "secret")
		want["secret_shown_once"] = true
		require.Equal(t, want, again.body, "%s: the first answer, less the secret", when)
	}
	replayed("at once")
	rotated := e.do(http.MethodPost, "/api/webhook_endpoints/"+id+"/rotate_secret", key, nil)
	require.Equal(t, http.StatusOK, rotated.status, rotated.raw)
	replayed("after a rotation")
	require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/api/webhook_endpoints/"+id, key, nil).status)
	replayed("after the endpoint's deletion")
}

// raw sends a request and returns the answer as it came (the calendar is not JSON).
func (e *env) raw(method, path string, header http.Header) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, nil)
	require.NoError(e.t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	checkAgainstSpec(e.t, req, res.StatusCode, res.Header, body)
	return res, body
}

// TestCalendarFeedRoute: the shop's calendar_url serves its feed (a real parser reads
// it) with an ETag, 304 when unchanged; the full-details setting changes it; rotating
// the token kills the old address at once; unknown tokens are 404.
func TestCalendarFeedRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	shop := e.do(http.MethodGet, "/api/shop", key, nil).body
	calURL := shop["calendar_url"].(string)
	require.True(t, strings.HasPrefix(calURL, publicURL+"/calendar/cal_"), calURL)
	path := strings.TrimPrefix(calURL, publicURL)

	opening := e.opening(key)
	cust := e.customer(key, map[string]any{"phone": "+15555550111", "name": "Bea Smith", "sms_opt_in": true, "language": "es"})
	_, err := e.pool.Exec(context.Background(), `WITH f AS (UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now(), updated_at = now()
		WHERE id = $1 RETURNING id) INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
		SELECT id, $2, $3, 'confirmed', 3500, 'usd', now(), now() FROM f`, opening["id"], cust, shopID)
	require.NoError(t, err)

	res, body := e.raw(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	require.Equal(t, "text/calendar; charset=utf-8", res.Header.Get("Content-Type"))
	etag := res.Header.Get("ETag")
	require.NotEmpty(t, etag)
	cal, err := ics.ParseCalendar(bytes.NewReader(body))
	require.NoError(t, err)
	require.Len(t, cal.Events(), 1)
	ev := cal.Events()[0]
	require.Equal(t, "Skin fade – Bea", ev.GetProperty(ics.ComponentPropertySummary).Value)
	require.Equal(t, "CONFIRMED", ev.GetProperty(ics.ComponentPropertyStatus).Value)

	res, body = e.raw(http.MethodGet, path, http.Header{"If-None-Match": {etag}})
	require.Equal(t, http.StatusNotModified, res.StatusCode)
	require.Empty(t, body)
	res, _ = e.raw(http.MethodHead, path, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, etag, res.Header.Get("ETag"))

	r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"calendar_full_details": true})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, true, r.body["calendar_full_details"])
	res, body = e.raw(http.MethodGet, path, http.Header{"If-None-Match": {etag}})
	require.Equal(t, http.StatusOK, res.StatusCode, "changed: the full name now")
	require.Contains(t, string(body), "Bea Smith")

	res, _ = e.raw(http.MethodGet, path+"?include_open=maybe", nil)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)

	r = e.do(http.MethodPost, "/api/shop/rotate-calendar-token", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	newPath := strings.TrimPrefix(r.body["calendar_url"].(string), publicURL)
	require.NotEqual(t, path, newPath)
	res, _ = e.raw(http.MethodGet, path, nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode, "the old address is dead at once")
	res, _ = e.raw(http.MethodGet, newPath, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)

	for _, p := range []string{"/calendar/cal_nope.ics", "/calendar/" + strings.TrimSuffix(strings.TrimPrefix(newPath, "/calendar/"), ".ics"), "/calendar/.ics"} {
		res, _ := e.raw(http.MethodGet, p, nil)
		require.Equal(t, http.StatusNotFound, res.StatusCode, p)
	}
}

// TestCalendarTokenNeverLogged: a feed request that fails inside the server is logged
// without its token (the path is redacted before anything can log it).
func TestCalendarTokenNeverLogged(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, _ jobs.Inserter) {
		// A calendar whose reads fail: its own pool is closed.
		broken, err := pgxpool.New(context.Background(), pool.Config().ConnString())
		require.NoError(t, err)
		broken.Close()
		h.Calendar = calendar.New(broken, h.Shops, calendar.Config{PublicURL: publicURL})
	})
	_, key := e.shop("+15555550100")
	calURL := e.do(http.MethodGet, "/api/shop", key, nil).body["calendar_url"].(string)
	token := strings.TrimSuffix(strings.TrimPrefix(calURL, publicURL+"/calendar/"), ".ics")
	res, body := e.raw(http.MethodGet, strings.TrimPrefix(calURL, publicURL), nil)
	require.Equal(t, http.StatusInternalServerError, res.StatusCode, string(body))
	logs := e.logs.String()
	require.Contains(t, logs, "request failed", "the failure is logged")
	require.Contains(t, logs, "/calendar/(token).ics")
	require.NotContains(t, logs, token)
	require.NotContains(t, string(body), token)
}

// TestErasureReachesEventsAndKeptAnswers: erasing a customer scrubs the copies of their
// details this issue keeps — the outbound events that name them (which are then not
// sent, nor sent again) and the answers kept for an Idempotency-Key.
func TestErasureReachesEventsAndKeptAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	ctx := context.Background()
	r := e.do(http.MethodPost, "/api/webhook_endpoints", key, map[string]any{"url": "https://crm.example.com/hooks"})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	epID := r.body["id"].(string)

	const number = "+15555550111"
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/customers", strings.NewReader(`{"phone":"`+number+`","name":"Bea","sms_opt_in":true}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", "bea")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusCreated, res.StatusCode, string(raw))
	var cust map[string]any
	require.NoError(t, json.Unmarshal(raw, &cust))
	custID := uuid.MustParse(cust["id"].(string))

	other := e.customer(key, map[string]any{"phone": "+15555550122", "name": "Cy", "sms_opt_in": true})
	require.NoError(t, e.h.Customers.OptOut(ctx, custID))
	require.NoError(t, e.h.Customers.OptOut(ctx, uuid.MustParse(other)))
	opening := e.opening(key)
	_, err = e.pool.Exec(ctx, `WITH f AS (UPDATE slot_openings SET status = 'filled', filled_by = $2, filled_at = now(), updated_at = now()
		WHERE id = $1 RETURNING id) INSERT INTO bookings (opening_id, customer_id, shop_id, status, amount_cents, currency, created_at, updated_at)
		SELECT id, $2, $3, 'confirmed', 3500, 'usd', now(), now() FROM f`, opening["id"], custID, shopID)
	require.NoError(t, err)
	require.NoError(t, hooks.RecordOpening(ctx, e.pool, uuid.MustParse(shopID), hooks.BookingConfirmed, time.Now(), uuid.MustParse(opening["id"].(string)), uuid.Nil))
	n, err := e.h.Hooks.Dispatch(ctx)
	require.NoError(t, err)
	require.Equal(t, 4, n, "two opt-outs, the declaration and the booking")
	require.Equal(t, 2, e.queryInt(`SELECT count(*) FROM webhook_events WHERE position($1 IN subject::text) > 0`, number))
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM idempotency_keys WHERE position(convert_to($1, 'UTF8') IN body) > 0`, number))

	r = e.do(http.MethodDelete, "/api/customers/"+custID.String(), key, nil)
	require.Equal(t, http.StatusNoContent, r.status, r.raw)
	require.Zero(t, e.queryInt(`SELECT count(*) FROM webhook_events WHERE position($1 IN subject::text) > 0
		OR position(convert_to($1, 'UTF8') IN coalesce(payload, '')) > 0`, number))
	require.Zero(t, e.queryInt(`SELECT count(*) FROM idempotency_keys WHERE position(convert_to($1, 'UTF8') IN body) > 0`, number))
	require.Equal(t, 2, e.queryInt(`SELECT count(*) FROM webhook_events WHERE payload IS NOT NULL`), "Cy's event and the declaration are untouched")

	// A delivery of a scrubbed event is not sent; sending it again is refused.
	page, err := e.h.Hooks.Deliveries(ctx, uuid.MustParse(shopID), uuid.MustParse(epID), hooks.DeliveryQuery{})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 4)
	var erased hooks.Delivery
	for _, d := range page.Deliveries {
		if d.EventType == hooks.BookingConfirmed {
			erased = d
		}
	}
	require.NoError(t, e.h.Hooks.Attempt(ctx, erased.ID, false))
	d, err := e.h.Hooks.Delivery(ctx, uuid.MustParse(shopID), uuid.MustParse(epID), erased.ID)
	require.NoError(t, err)
	require.Equal(t, hooks.DeliveryFailed, d.Status)
	require.Contains(t, d.LastError, "erased")
	requireError(t, e.do(http.MethodPost, "/api/webhook_endpoints/"+epID+"/deliveries/"+erased.ID.String()+"/retry", key, nil),
		http.StatusConflict, "webhook_event_erased")
}

// TestIdempotentServerErrorIsNotReplayed: a keyed request that fails with a 5xx does not
// pin its answer: the key is given back, and the retry runs again.
func TestIdempotentServerErrorIsNotReplayed(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, queue jobs.Inserter) {
		// Openings on a closed pool: every declaration fails inside the server.
		broken, err := pgxpool.New(context.Background(), pool.Config().ConnString())
		require.NoError(t, err)
		broken.Close()
		h.Openings = slots.New(broken, queue, nil, nil, slots.Config{})
	})
	_, key := e.shop("+15555550100")
	body, err := json.Marshal(validOpening())
	require.NoError(t, err)
	for range 2 {
		req, err := http.NewRequest(http.MethodPost, e.url+"/api/openings", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", "k-500")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusInternalServerError, res.StatusCode, string(raw))
		require.Empty(t, res.Header.Get("Idempotent-Replayed"), "run again, not replayed")
		require.Zero(t, e.queryInt(`SELECT count(*) FROM idempotency_keys`), "the key was given back")
	}
}
