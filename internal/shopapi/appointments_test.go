package shopapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
)

// appointment is a PUT body: a booked appointment of 45 minutes, starting at startsAt,
// with the owner's version 1.
func appointment(startsAt string) map[string]any {
	return map[string]any{
		"starts_at": startsAt, "duration_minutes": 45, "service": "Skin fade", "price_cents": 3500,
		"phone": "+15555550123", "customer_name": "Ada L.", "version": 1, "updated_at": "2026-11-20T09:00:00Z",
	}
}

// amend is body with the fields of change replacing its own.
func amend(body, change map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for k, v := range change {
		out[k] = v
	}
	return out
}

// putAppointment PUTs the owner's appointment externalID.
func (e *env) putAppointment(key, externalID string, body any) resp {
	e.t.Helper()
	return e.do(http.MethodPut, "/api/appointments/api/"+url.PathEscape(externalID), key, body)
}

// staff adds a person to the shop and returns their id.
func (e *env) staff(key, name string) string {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/staff", key, map[string]any{"name": name})
	require.Equal(e.t, http.StatusCreated, r.status, r.raw)
	return r.body["id"].(string)
}

func TestAppointmentUpsertIsIdempotentAndOrdered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	customerID := e.customer(key, map[string]any{"phone": "+15555550123", "name": "Ada", "sms_opt_in": true})
	kim := e.staff(key, "Kim")
	start := future(48 * time.Hour)
	body := amend(appointment(start), map[string]any{"staff_id": kim})

	created := e.putAppointment(key, "crm-1", body)
	require.Equal(t, http.StatusCreated, created.status, created.raw)
	id := created.body["id"].(string)
	require.Equal(t, "/api/appointments/"+id, created.header.Get("Location"))
	require.Equal(t, map[string]any{"source": "api", "id": "crm-1"}, created.body["external"])
	require.Equal(t, map[string]any{"id": customerID, "name": "Ada"}, created.body["customer"], "matched by phone")
	require.Equal(t, map[string]any{"id": kim, "name": "Kim"}, created.body["staff"])
	require.Equal(t, "+15555550123", created.body["phone"], "one appointment shows its number")
	require.Equal(t, "Ada L.", created.body["customer_name"])
	require.Equal(t, start, created.body["starts_at"])
	require.Equal(t, 45.0, created.body["duration_minutes"])
	require.Equal(t, "booked", created.body["status"])
	require.Equal(t, "api", created.body["source"])
	require.Equal(t, 1.0, created.body["version"])
	require.Equal(t, "2026-11-20T09:00:00Z", created.body["updated_at"])
	require.NotContains(t, created.body, "opening", "a booked appointment freed nothing")

	// The same description again: 200, the stored appointment, nothing changed.
	again := e.putAppointment(key, "crm-1", body)
	require.Equal(t, http.StatusOK, again.status, again.raw)
	require.Equal(t, created.body, again.body)

	// A newer one changes it.
	newer := e.putAppointment(key, "crm-1", amend(body, map[string]any{"service": "Beard trim", "version": 2}))
	require.Equal(t, http.StatusOK, newer.status, newer.raw)
	require.Equal(t, "Beard trim", newer.body["service"])
	require.Equal(t, 2.0, newer.body["version"])

	// Older ones arriving late change nothing and answer what is stored: a lower
	// version (a cancellation, which must not be applied), the same version with an
	// earlier updated_at.
	for _, old := range []map[string]any{
		amend(body, map[string]any{"status": "cancelled", "version": 1, "updated_at": "2026-11-28T09:00:00Z"}),
		amend(body, map[string]any{"status": "cancelled", "version": 2, "updated_at": "2026-11-19T09:00:00Z"}),
	} {
		r := e.putAppointment(key, "crm-1", old)
		require.Equal(t, http.StatusOK, r.status, r.raw)
		require.Equal(t, newer.body, r.body)
	}
	require.Equal(t, newer.body, e.do(http.MethodGet, "/api/appointments/"+id, key, nil).body)
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM appointments`))
	require.Equal(t, 0, e.queryInt(`SELECT count(*) FROM slot_openings`), "nothing was cancelled")

	// Without a phone or a person: null, not "".
	bare := e.putAppointment(key, "crm 2", amend(appointment(start), map[string]any{"phone": nil, "customer_name": "", "status": nil}))
	require.Equal(t, http.StatusCreated, bare.status, bare.raw)
	require.Nil(t, bare.body["phone"])
	require.Nil(t, bare.body["customer"])
	require.Nil(t, bare.body["staff"])
	require.Equal(t, "booked", bare.body["status"], "status absent or null: booked")
	require.Equal(t, "crm 2", bare.body["external"].(map[string]any)["id"], "the path's id, unescaped")

	// An id with a slash travels escaped (%2F) and is stored as the owner's system
	// names it. (Sent raw: the document's router, which matches the unescaped path,
	// cannot place it.)
	status, raw := e.rawDo(http.MethodPut, "/api/appointments/api/"+url.PathEscape("crm/3"), key, appointment(start))
	require.Equal(t, http.StatusCreated, status, raw)
	var slashed map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &slashed))
	require.Equal(t, map[string]any{"source": "api", "id": "crm/3"}, slashed["external"])
}

// rawDo sends one request from any goroutine (no require inside), with body as JSON
// when it is not nil, and answers its status and body unchecked.
func (e *env) rawDo(method, path, key string, body any) (int, string) {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return 0, err.Error()
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		return 0, err.Error()
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

func TestAppointmentCancelDeclaresItsOpeningOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	start := future(48 * time.Hour)
	r := e.putAppointment(key, "crm-7", appointment(start))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	id := r.body["id"].(string)

	// The owner's cancel, sent 20 times at once: every answer is the cancelled
	// appointment with the one opening.
	const n = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers []string
		codes   = map[int]int{}
	)
	begin := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			status, raw := e.rawDo(http.MethodPost, "/api/appointments/"+id+"/cancel", key, nil)
			mu.Lock()
			defer mu.Unlock()
			codes[status]++
			answers = append(answers, raw)
		}()
	}
	close(begin)
	wg.Wait()
	require.Equal(t, map[int]int{http.StatusOK: n}, codes, "%v", answers)
	var openingID string
	for _, raw := range answers {
		var a map[string]any
		require.NoError(t, json.Unmarshal([]byte(raw), &a), raw)
		require.Equal(t, "cancelled", a["status"])
		o, _ := a["opening"].(map[string]any)
		require.NotNil(t, o, raw)
		require.Equal(t, "declared", o["state"], raw)
		if openingID == "" {
			openingID = o["id"].(string)
		}
		require.Equal(t, openingID, o["id"], "one opening, in every answer")
		require.Equal(t, start, o["starts_at"])
		require.Equal(t, 45.0, o["duration_minutes"])
	}
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/appointments/"+id+"/cancel", nil)
	require.NoError(t, err)
	checkAgainstSpec(t, req, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, []byte(answers[0]))

	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM slot_openings`), "declared exactly once")
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM slot_openings WHERE source = 'appointment' AND source_id = $1`, id))
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM appointment_openings`))
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave'`), "one first wave: texted once")
	o := e.do(http.MethodGet, "/api/openings/"+openingID, key, nil)
	require.Equal(t, http.StatusOK, o.status, o.raw)
	require.Equal(t, start, o.body["starts_at"], "the appointment's time")
	require.Equal(t, 45.0, o.body["duration_minutes"])
	require.Equal(t, "Skin fade", o.body["service"])
	require.Equal(t, 3500.0, o.body["price_cents"])
	require.Equal(t, "open", o.body["status"])

	// The appointment shows its opening; cancelling again changes nothing.
	got := e.do(http.MethodGet, "/api/appointments/"+id, key, nil)
	require.Equal(t, openingID, got.body["opening"].(map[string]any)["id"])
	again := e.do(http.MethodPost, "/api/appointments/"+id+"/cancel", key, nil)
	require.Equal(t, http.StatusOK, again.status, again.raw)
	require.Equal(t, got.body, again.body)
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM slot_openings`))

	// A source's cancellation redelivered (PUT, cancelled) declares nothing more.
	r = e.putAppointment(key, "crm-7", amend(appointment(start), map[string]any{"status": "cancelled", "version": 2}))
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM slot_openings`))

	// Only a booked appointment can be cancelled.
	done := e.putAppointment(key, "crm-8", amend(appointment(future(72*time.Hour)), map[string]any{"status": "completed"}))
	require.Equal(t, http.StatusCreated, done.status, done.raw)
	requireError(t, e.do(http.MethodPost, "/api/appointments/"+done.body["id"].(string)+"/cancel", key, nil),
		http.StatusConflict, "appointment_not_booked")

	// A cancellation by PUT declares too.
	later := future(96 * time.Hour)
	r = e.putAppointment(key, "crm-9", appointment(later))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	r = e.putAppointment(key, "crm-9", amend(appointment(later), map[string]any{"status": "cancelled", "version": 2}))
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "declared", r.body["opening"].(map[string]any)["state"], r.raw)
	require.Equal(t, 2, e.queryInt(`SELECT count(*) FROM slot_openings WHERE source = 'appointment'`))
}

func TestAppointmentListFiltersPagesAndMasks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	kim, lou := e.staff(key, "Kim"), e.staff(key, "Lou")
	base := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Hour)
	at := func(h int) string { return base.Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	// Five appointments an hour apart: Kim's at 0, 2, 4; Lou's at 1, 3; the one at 3
	// recorded cancelled.
	for i := range 5 {
		staff := kim
		if i%2 == 1 {
			staff = lou
		}
		b := amend(appointment(at(i)), map[string]any{"staff_id": staff})
		if i == 3 {
			b["status"] = "cancelled"
		}
		r := e.putAppointment(key, "crm-"+string(rune('a'+i)), b)
		require.Equal(t, http.StatusCreated, r.status, r.raw)
	}

	list := func(query string) resp {
		t.Helper()
		r := e.do(http.MethodGet, "/api/appointments"+query, key, nil)
		require.Equal(t, http.StatusOK, r.status, r.raw)
		return r
	}
	starts := func(r resp) []string {
		var out []string
		for _, a := range r.body["appointments"].([]any) {
			out = append(out, a.(map[string]any)["starts_at"].(string))
		}
		return out
	}

	all := list("")
	require.Equal(t, []string{at(0), at(1), at(2), at(3), at(4)}, starts(all), "by start")
	require.Nil(t, all.body["next_cursor"])
	for i, a := range all.body["appointments"].([]any) {
		m := a.(map[string]any)
		require.Regexp(t, `^\+155\*+23$`, m["phone"], "masked in lists")
		if i == 3 {
			require.Equal(t, "declared", m["opening"].(map[string]any)["state"], "the cancelled one shows its opening")
			continue
		}
		require.NotContains(t, m, "opening")
	}
	require.NotContains(t, all.raw, "+15555550123")

	// Pages of two, by cursor.
	var paged []string
	query := "?limit=2"
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		r := list(query)
		require.LessOrEqual(t, len(r.body["appointments"].([]any)), 2)
		paged = append(paged, starts(r)...)
		next, _ := r.body["next_cursor"].(string)
		if next == "" {
			break
		}
		query = "?limit=2&cursor=" + url.QueryEscape(next)
	}
	require.Equal(t, starts(all), paged)

	require.Equal(t, []string{at(0), at(2), at(4)}, starts(list("?staff_id="+kim)))
	require.Equal(t, []string{at(3)}, starts(list("?status=cancelled")))
	require.Equal(t, []string{at(1), at(3)}, starts(list("?staff_id="+lou+"&status=")))
	window := "?from=" + url.QueryEscape(at(1)) + "&to=" + url.QueryEscape(at(3))
	require.Equal(t, []string{at(1), at(2)}, starts(list(window)), "from inclusive, to exclusive")
	require.Equal(t, []string{at(2)}, starts(list(window+"&staff_id="+kim+"&status=booked")))

	// A page of the filters goes on with the filters.
	first := list("?limit=1&staff_id=" + kim)
	next := list("?limit=1&staff_id=" + kim + "&cursor=" + url.QueryEscape(first.body["next_cursor"].(string)))
	require.Equal(t, []string{at(2)}, starts(next))

	tests := []struct {
		name, query, code, field string
	}{
		{"from", "?from=tomorrow", "invalid_from", "from"},
		{"to", "?to=2026-13-01", "invalid_to", "to"},
		{"to before from", "?from=" + url.QueryEscape(at(3)) + "&to=" + url.QueryEscape(at(1)), "invalid_to", "to"},
		{"status", "?status=CANCELLED", "invalid_status", "status"},
		{"staff", "?staff_id=kim", "invalid_staff_id", "staff_id"},
		{"cursor", "?cursor=not-ours", "invalid_cursor", "cursor"},
		{"limit", "?limit=0", "invalid_limit", "limit"},
		{"limit too big", "?limit=501", "invalid_limit", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodGet, "/api/appointments"+tt.query, key, nil)
			requireError(t, r, http.StatusUnprocessableEntity, tt.code)
			require.Equal(t, tt.field, r.errFieldName())
		})
	}
}

func TestAppointmentBadInputNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	_, otherKey := e.shop("+15555550101")
	othersStaff := e.staff(otherKey, "Kim")
	good := appointment(future(48 * time.Hour))

	tests := []struct {
		name   string
		source string
		body   any
		status int
		code   string
		field  string
	}{
		{"unknown source", "google", good, 422, "invalid_source", "source"},
		{"a connector's source", "calcom", good, 422, "invalid_source", "source"},
		{"no start", "api", amend(good, map[string]any{"starts_at": nil}), 422, "invalid_starts_at", "starts_at"},
		{"bad start", "api", amend(good, map[string]any{"starts_at": "tomorrow at 3"}), 422, "invalid_starts_at", "starts_at"},
		{"start not a string", "api", amend(good, map[string]any{"starts_at": 1764000000}), 400, "bad_json", "starts_at"},
		{"bad updated_at", "api", amend(good, map[string]any{"updated_at": "2026-11-20"}), 422, "invalid_updated_at", "updated_at"},
		{"no length", "api", amend(good, map[string]any{"duration_minutes": 0}), 422, "invalid_duration_minutes", "duration_minutes"},
		{"too long", "api", amend(good, map[string]any{"duration_minutes": 1441}), 422, "invalid_duration_minutes", "duration_minutes"},
		{"length not a number", "api", amend(good, map[string]any{"duration_minutes": "45"}), 400, "bad_json", "duration_minutes"},
		{"huge length", "api", amend(good, map[string]any{"duration_minutes": 1e30}), 400, "bad_json", "duration_minutes"},
		{"national phone", "api", amend(good, map[string]any{"phone": "(555) 555-0123"}), 422, "invalid_phone", "phone"},
		{"not a phone", "api", amend(good, map[string]any{"phone": "call me"}), 422, "invalid_phone", "phone"},
		{"bad staff id", "api", amend(good, map[string]any{"staff_id": "kim"}), 422, "invalid_staff_id", "staff_id"},
		{"unknown staff", "api", amend(good, map[string]any{"staff_id": uuid.NewString()}), 422, "unknown_staff", "staff_id"},
		{"another shop's staff", "api", amend(good, map[string]any{"staff_id": othersStaff}), 422, "unknown_staff", "staff_id"},
		{"bad status", "api", amend(good, map[string]any{"status": "CANCELLED_BY_SELLER"}), 422, "invalid_status", "status"},
		{"unknown status", "api", amend(good, map[string]any{"status": "deleted"}), 422, "invalid_status", "status"},
		{"negative price", "api", amend(good, map[string]any{"price_cents": -1}), 422, "invalid_price_cents", "price_cents"},
		{"negative version", "api", amend(good, map[string]any{"version": -1}), 422, "invalid_version", "version"},
		{"not an object", "api", `[1]`, 400, "bad_json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.sub(t).do(http.MethodPut, "/api/appointments/"+tt.source+"/crm-1", key, tt.body)
			requireError(t, r, tt.status, tt.code)
			require.Equal(t, tt.field, r.errFieldName())
		})
	}
	long := e.putAppointment(key, strings.Repeat("x", 301), good)
	requireError(t, long, http.StatusUnprocessableEntity, "invalid_external_id")
	require.Equal(t, "external_id", long.errFieldName())
	require.Equal(t, 0, e.queryInt(`SELECT count(*) FROM appointments`), "nothing recorded")
}

func TestAppointmentsAreTenantIsolated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, keyA := e.shop("+15555550100")
	_, keyB := e.shop("+15555550101")
	start := future(48 * time.Hour)
	a := e.putAppointment(keyA, "crm-1", appointment(start))
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	idA := a.body["id"].(string)

	for _, id := range []string{idA, "not-a-uuid", uuid.NewString()} {
		requireError(t, e.do(http.MethodGet, "/api/appointments/"+id, keyB, nil), http.StatusNotFound, "appointment_not_found")
		requireError(t, e.do(http.MethodPost, "/api/appointments/"+id+"/cancel", keyB, nil), http.StatusNotFound, "appointment_not_found")
	}
	require.Empty(t, e.do(http.MethodGet, "/api/appointments", keyB, nil).body["appointments"])

	// B's appointment of the same external id is B's own; A's is untouched.
	b := e.putAppointment(keyB, "crm-1", amend(appointment(start), map[string]any{"status": "cancelled", "version": 9}))
	require.Equal(t, http.StatusCreated, b.status, b.raw)
	require.NotEqual(t, idA, b.body["id"])
	got := e.do(http.MethodGet, "/api/appointments/"+idA, keyA, nil)
	require.Equal(t, a.body, got.body)
	require.Equal(t, "booked", got.body["status"])

	// Without a key, every route is 401.
	for _, p := range []struct{ method, path string }{
		{http.MethodPut, "/api/appointments/api/crm-1"}, {http.MethodGet, "/api/appointments"},
		{http.MethodGet, "/api/appointments/" + idA}, {http.MethodPost, "/api/appointments/" + idA + "/cancel"},
	} {
		requireError(t, e.do(p.method, p.path, "", nil), http.StatusUnauthorized, "unauthorized")
	}
}

func TestAppointmentWithAutoDeclareOffWaitsForTheOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")

	require.Equal(t, true, e.do(http.MethodGet, "/api/shop", key, nil).body["auto_declare"], "on by default")
	r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"auto_declare": false})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, false, r.body["auto_declare"])
	require.Equal(t, false, e.do(http.MethodGet, "/api/shop", key, nil).body["auto_declare"], "stored")
	bad := e.do(http.MethodPatch, "/api/shop", key, map[string]any{"auto_declare": nil})
	requireError(t, bad, http.StatusUnprocessableEntity, "invalid_auto_declare")
	require.Equal(t, "auto_declare", bad.errFieldName())
	requireError(t, e.do(http.MethodPatch, "/api/shop", key, map[string]any{"auto_declare": "no"}), http.StatusBadRequest, "bad_json")

	start := future(48 * time.Hour)
	r = e.putAppointment(key, "crm-1", appointment(start))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	id := r.body["id"].(string)
	r = e.do(http.MethodPost, "/api/appointments/"+id+"/cancel", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "cancelled", r.body["status"])
	require.Equal(t, map[string]any{"state": "waiting", "id": nil, "reason": nil, "starts_at": start, "duration_minutes": 45.0},
		r.body["opening"], "the freed time waits for the owner")
	require.Equal(t, 0, e.queryInt(`SELECT count(*) FROM slot_openings`), "no opening until the owner offers it")

	// The book's Offer (the dashboard's "Offer it") declares it.
	ctx := context.Background()
	shop, err := e.h.Shops.Get(ctx, uuid.MustParse(shopID))
	require.NoError(t, err)
	d, err := e.h.Book.Offer(ctx, shop, uuid.MustParse(id))
	require.NoError(t, err)
	require.Equal(t, book.DeclarationDeclared, d.State)
	got := e.do(http.MethodGet, "/api/appointments/"+id, key, nil)
	o := got.body["opening"].(map[string]any)
	require.Equal(t, "declared", o["state"])
	require.Equal(t, d.OpeningID.String(), o["id"])
	require.Equal(t, 1, e.queryInt(`SELECT count(*) FROM slot_openings WHERE source = 'appointment' AND source_id = $1`, id))

	// Back on, a cancellation declares by itself again.
	require.Equal(t, http.StatusOK, e.do(http.MethodPatch, "/api/shop", key, map[string]any{"auto_declare": true}).status)
	r = e.putAppointment(key, "crm-2", appointment(future(72*time.Hour)))
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	r = e.do(http.MethodPost, "/api/appointments/"+r.body["id"].(string)+"/cancel", key, nil)
	require.Equal(t, "declared", r.body["opening"].(map[string]any)["state"], r.raw)
	require.Equal(t, 2, e.queryInt(`SELECT count(*) FROM slot_openings`))
}
