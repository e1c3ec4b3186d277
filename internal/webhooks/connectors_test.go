package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/catalog"
	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
	"github.com/slotrecovery/slotrecovery/internal/httperr"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// connPublicURL is the server's PUBLIC_URL in these tests: not where the test posts
// (the httptest server), as behind a proxy, but what Square signs.
const connPublicURL = "https://slots.example.test"

// connWorld is the owners' API and the connectors' webhooks on one database, over real
// HTTP, with one shop.
type connWorld struct {
	t        *testing.T
	url      string
	pool     *pgxpool.Pool
	shop     shops.Shop
	key      string
	openings *slots.Service
	book     *book.Service
	logs     *bytes.Buffer
	logMu    *sync.Mutex
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func newConnWorld(t *testing.T) connWorld {
	t.Helper()
	ctx := context.Background()
	pool, _ := pgtest.New(t)
	// Insert-only River client: the openings' first waves are enqueued, not run.
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	shopsSvc := shops.New(pool, shops.Config{})
	openings := slots.New(pool, rc, nil, nil, slots.Config{})
	bk := book.New(pool, shopsSvc, openings, book.Config{})
	shop, key, err := shopsSvc.Create(ctx, shops.NewShop{Name: "Book", Timezone: "UTC",
		SMSNumber: "+15550001000", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)

	w := connWorld{t: t, pool: pool, shop: shop, key: key, openings: openings, book: bk,
		logs: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	log := slog.New(slog.NewJSONHandler(lockedWriter{w.logMu, w.logs}, nil))
	e := echo.New()
	e.HideBanner = true
	e.HTTPErrorHandler = httperr.Handler(log)
	(&shopapi.Handlers{Shops: shopsSvc, Book: bk, PublicURL: connPublicURL}).Register(e)
	h := &webhooks.Connectors{Book: bk, PublicURL: connPublicURL, Logger: log}
	e.POST(webhooks.CalcomPath, h.Calcom)
	e.POST(webhooks.SquarePath, h.Square)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

// answer is an HTTP answer, decoded loosely.
type connAnswer struct {
	status int
	raw    string
	body   map[string]any
	took   time.Duration
}

func (a connAnswer) code() string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// send makes one request; it reports failures with t (a goroutine's own test is the
// caller's), and never with require from another goroutine.
func (w connWorld) send(t testing.TB, method, path string, header http.Header, body []byte) (connAnswer, error) {
	req, err := http.NewRequest(method, w.url+path, bytes.NewReader(body))
	if err != nil {
		return connAnswer{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return connAnswer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return connAnswer{}, err
	}
	a := connAnswer{status: res.StatusCode, raw: string(raw), took: time.Since(start)}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &a.body)
	}
	return a, nil
}

func (w connWorld) api(method, path string, body any) connAnswer {
	w.t.Helper()
	var b []byte
	if body != nil {
		var err error
		b, err = json.Marshal(body)
		require.NoError(w.t, err)
	}
	a, err := w.send(w.t, method, path, http.Header{"Authorization": {"Bearer " + w.key},
		"Content-Type": {"application/json"}}, b)
	require.NoError(w.t, err)
	return a
}

// connector makes a connector of kind and returns its id, webhook path and secret.
func (w connWorld) connector(fields map[string]any) (id, path, secret string) {
	w.t.Helper()
	a := w.api(http.MethodPost, "/api/connectors", fields)
	require.Equal(w.t, http.StatusCreated, a.status, a.raw)
	id = a.body["id"].(string)
	u, _ := a.body["webhook_url"].(string)
	secret, _ = a.body["secret"].(string)
	return id, strings.TrimPrefix(u, connPublicURL), secret
}

func (w connWorld) lastDelivery(id string) map[string]any {
	w.t.Helper()
	a := w.api(http.MethodGet, "/api/connectors/"+id, nil)
	require.Equal(w.t, http.StatusOK, a.status, a.raw)
	d, _ := a.body["last_delivery"].(map[string]any)
	return d
}

func (w connWorld) openingsOf() []slots.Opening {
	w.t.Helper()
	ops, err := w.openings.List(context.Background(), w.shop.ID, "", 100)
	require.NoError(w.t, err)
	return ops
}

// postCalcom posts body to path signed with secret, as cal.com does.
func (w connWorld) postCalcom(t testing.TB, path, secret string, body []byte) (connAnswer, error) {
	return w.send(t, http.MethodPost, path, http.Header{"Content-Type": {"application/json"},
		calcom.SignatureHeader: {calcom.Sign(secret, body)}}, body)
}

// postSquare posts body to path signed with key over the notification URL, as Square does.
func (w connWorld) postSquare(t testing.TB, path, key string, body []byte) (connAnswer, error) {
	return w.send(t, http.MethodPost, path, http.Header{"Content-Type": {"application/json"},
		square.SignatureHeader: {square.Sign(key, connPublicURL+path, body)}}, body)
}

// fixture is an adapter's test payload with its days (December 2026) moved to days ahead
// of now, so its appointments stay in the future whenever the test runs.
func fixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, 2+n).Format("2006-01-02") }
	return []byte(strings.NewReplacer("2026-12-01", day(1), "2026-12-02", day(2), "2026-12-03", day(3)).Replace(string(b)))
}

const calcomData = "../connectors/calcom/testdata/"
const squareData = "../connectors/square/testdata/"

// TestCalcomConnectorOverHTTP: cal.com's signed deliveries to a connector make a booked
// and then cancelled appointment and one opening of its time; a redelivery is
// acknowledged as a duplicate and changes nothing; a wrong, missing or "no-secret-provided"
// signature is 401 in the API's error shape, recorded as the connector's last delivery.
func TestCalcomConnectorOverHTTP(t *testing.T) {
	t.Parallel()
	w := newConnWorld(t)
	id, path, secret := w.connector(map[string]any{"kind": "calcom"})
	require.Equal(t, "/webhooks/calcom/"+id, path)
	created := fixture(t, calcomData+"booking_created.json")
	cancelled := fixture(t, calcomData+"booking_cancelled.json")
	post := func(body []byte) connAnswer {
		t.Helper()
		a, err := w.postCalcom(t, path, secret, body)
		require.NoError(t, err)
		return a
	}

	a := post(created)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.Equal(t, "applied", a.body["result"])
	require.EqualValues(t, 1, a.body["appointments"])
	require.Empty(t, w.openingsOf())
	require.Equal(t, "BOOKING_CREATED", w.lastDelivery(id)["event"])

	a = post(cancelled)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.Equal(t, "applied", a.body["result"])
	for _, body := range [][]byte{cancelled, created} {
		a = post(body)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.Equal(t, "duplicate", a.body["result"], "a redelivery is acknowledged, not applied")
	}
	last := w.lastDelivery(id)
	require.Equal(t, "duplicate", last["result"])
	require.Equal(t, "BOOKING_CREATED", last["event"])

	appt, err := w.book.GetExternal(context.Background(), w.shop.ID, connectors.SourceCalcom, "bFJeNb2uX8ANpT3JL5EfXw")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, appt.Status)
	ops := w.openingsOf()
	require.Len(t, ops, 1, "one opening per cancellation")
	require.True(t, ops[0].StartsAt.Equal(appt.StartsAt))
	require.Equal(t, "Haircut", ops[0].Service)

	for name, sig := range map[string]string{
		"wrong secret":   calcom.Sign("not-the-secret", cancelled),
		"no secret":      "no-secret-provided",
		"missing header": "",
	} {
		t.Run(name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}}
			if sig != "" {
				h.Set(calcom.SignatureHeader, sig)
			}
			a, err := w.send(t, http.MethodPost, path, h, cancelled)
			require.NoError(t, err)
			require.Equal(t, http.StatusUnauthorized, a.status, a.raw)
			require.Equal(t, "bad_signature", a.code())
			require.Equal(t, "bad_signature", w.lastDelivery(id)["result"], "the refusal is recorded")
		})
	}
	require.Len(t, w.openingsOf(), 1)

	// A signed body that is not cal.com's is 400, recorded; an unknown connector, or a
	// cal.com connector's id on Square's path, is 404.
	a = post([]byte(`{"payload":{}}`))
	require.Equal(t, http.StatusBadRequest, a.status, a.raw)
	require.Equal(t, "bad_payload", a.code())
	require.Equal(t, "bad_payload", w.lastDelivery(id)["result"])
	for _, p := range []string{"/webhooks/calcom/" + uuid.NewString(), "/webhooks/calcom/nope", "/webhooks/square/" + id} {
		a, err := w.postCalcom(t, p, secret, cancelled)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, a.status, a.raw)
		require.Equal(t, "connector_not_found", a.code())
	}
	// A deleted connector's deliveries are refused.
	require.Equal(t, http.StatusNoContent, w.api(http.MethodDelete, "/api/connectors/"+id, nil).status)
	a = post(cancelled)
	require.Equal(t, http.StatusNotFound, a.status, a.raw)

	w.logMu.Lock()
	defer w.logMu.Unlock()
	require.NotContains(t, w.logs.String(), secret, "secrets never reach the logs")
}

// TestCalcomOutOfOrder: a cancellation delivered before the booking it cancels leaves
// the appointment cancelled with one opening: the late BOOKING_CREATED (older, by
// cal.com's createdAt) is applied and changes nothing.
func TestCalcomOutOfOrder(t *testing.T) {
	t.Parallel()
	w := newConnWorld(t)
	_, path, secret := w.connector(map[string]any{"kind": "calcom"})
	for _, name := range []string{"booking_cancelled.json", "booking_created.json", "booking_requested.json"} {
		a, err := w.postCalcom(t, path, secret, fixture(t, calcomData+name))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, a.status, a.raw)
	}
	appt, err := w.book.GetExternal(context.Background(), w.shop.ID, connectors.SourceCalcom, "bFJeNb2uX8ANpT3JL5EfXw")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, appt.Status, "an older update never resurrects a cancelled appointment")
	require.Len(t, w.openingsOf(), 1)
}

// TestSquareConnectorOverHTTP: a Square connector refuses deliveries until its
// signature key is given; then Square's versions, newest first, leave the booking
// cancelled with one opening, a redelivered event_id is a duplicate, a signature over
// another URL than PUBLIC_URL's is refused, and an event the book has no use for is
// acknowledged.
func TestSquareConnectorOverHTTP(t *testing.T) {
	t.Parallel()
	w := newConnWorld(t)
	ctx := context.Background()
	// Square names no service: a shop with services offers each customer their own.
	_, err := catalog.New(w.pool, nil).AddService(ctx, w.shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	id, path, _ := w.connector(map[string]any{"kind": "square"})
	require.Equal(t, "/webhooks/square/"+id, path)
	const key = "sq-signature-key-1"
	cancelled := fixture(t, squareData+"booking_updated_cancelled.json")

	a, err := w.postSquare(t, path, key, cancelled)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, a.status, "no key given yet: nothing verifies")
	require.Equal(t, "bad_signature", w.lastDelivery(id)["result"])

	set := w.api(http.MethodPatch, "/api/connectors/"+id, map[string]any{"signature_key": key})
	require.Equal(t, http.StatusOK, set.status, set.raw)

	// Signed over the address the test reached, not the notification URL Square knows.
	wrong := http.Header{"Content-Type": {"application/json"}, square.SignatureHeader: {square.Sign(key, w.url+path, cancelled)}}
	a, err = w.send(t, http.MethodPost, path, wrong, cancelled)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, a.status, a.raw)
	require.Equal(t, "bad_signature", a.code())

	for _, step := range []struct{ name, result string }{
		{"booking_updated_cancelled.json", "applied"},
		{"booking_created.json", "applied"},
		{"booking_updated_moved.json", "applied"},
		{"booking_updated_cancelled.json", "duplicate"},
		{"payment_updated.json", "ignored"},
	} {
		a, err := w.postSquare(t, path, key, fixture(t, squareData+step.name))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.Equal(t, step.result, a.body["result"], step.name)
		require.Less(t, a.took, 10*time.Second, "Square waits 10 s")
	}
	appt, err := w.book.GetExternal(ctx, w.shop.ID, connectors.SourceSquare, "z4r1xkq9b2m7np")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, appt.Status)
	require.EqualValues(t, 2, appt.Version)
	require.Len(t, w.openingsOf(), 1)
	last := w.lastDelivery(id)
	require.Equal(t, "ignored", last["result"])
	require.Equal(t, "payment.updated", last["event"])
}

// TestConnectorDeliveryStorm: many deliveries at once, every version of a cal.com and a
// Square booking several times each in random orders, over HTTP: every one is answered
// 200 (applied or duplicate), and each booking ends cancelled with exactly one opening
// of its own.
func TestConnectorDeliveryStorm(t *testing.T) {
	t.Parallel()
	w := newConnWorld(t)
	ctx := context.Background()
	_, err := catalog.New(w.pool, nil).AddService(ctx, w.shop.ID, catalog.NewService{Name: "Cut", DurationMinutes: 30, PriceCents: 3000})
	require.NoError(t, err)
	_, calPath, calSecret := w.connector(map[string]any{"kind": "calcom"})
	const key = "storm-key"
	_, sqPath, _ := w.connector(map[string]any{"kind": "square", "signature_key": key})

	type delivery func(t testing.TB) (connAnswer, error)
	var all []delivery
	for range 8 {
		for _, name := range []string{"booking_created.json", "booking_cancelled.json"} {
			body := fixture(t, calcomData+name)
			all = append(all, func(t testing.TB) (connAnswer, error) { return w.postCalcom(t, calPath, calSecret, body) })
		}
		for _, name := range []string{"booking_created.json", "booking_updated_moved.json", "booking_updated_cancelled.json"} {
			body := fixture(t, squareData+name)
			all = append(all, func(t testing.TB) (connAnswer, error) { return w.postSquare(t, sqPath, key, body) })
		}
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })

	answers := make([]connAnswer, len(all))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, d := range all {
		wg.Go(func() {
			<-start
			answers[i], errs[i] = d(t)
		})
	}
	close(start)
	wg.Wait()
	for i, a := range answers {
		require.NoError(t, errs[i])
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.Contains(t, []any{"applied", "duplicate"}, a.body["result"], a.raw)
		require.Less(t, a.took, 10*time.Second)
	}
	cal, err := w.book.GetExternal(ctx, w.shop.ID, connectors.SourceCalcom, "bFJeNb2uX8ANpT3JL5EfXw")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, cal.Status)
	sq, err := w.book.GetExternal(ctx, w.shop.ID, connectors.SourceSquare, "z4r1xkq9b2m7np")
	require.NoError(t, err)
	require.Equal(t, connectors.StatusCancelled, sq.Status)
	// Each release declared once: cal.com's one cancellation is one opening; Square's
	// booking frees one time or two, as the versions happened to arrive (its move from
	// 17:30 to 18:00, when seen before the cancellation, freed 17:30 too), each once.
	per := map[uuid.UUID]int{}
	starts := map[string]bool{}
	for _, op := range w.openingsOf() {
		per[op.SourceID]++
		key := op.SourceID.String() + op.StartsAt.String()
		require.False(t, starts[key], "one opening per freed time")
		starts[key] = true
	}
	require.Equal(t, 1, per[cal.ID], "exactly one opening per cancellation")
	var declared int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM appointment_openings WHERE appointment_id = $1 AND state = 'declared'`,
		sq.ID).Scan(&declared))
	require.Equal(t, declared, per[sq.ID], "an opening per declared release, no more")
	require.Contains(t, []int{1, 2}, per[sq.ID])
	require.Len(t, per, 2)
}

// TestConnectorBadDeliveries: whatever a signed or unsigned delivery carries, the answer
// is a 2xx or a 4xx in the API's error shape, never a 5xx, and the outcome is the
// connector's last delivery.
func TestConnectorBadDeliveries(t *testing.T) {
	t.Parallel()
	w := newConnWorld(t)
	id, path, secret := w.connector(map[string]any{"kind": "calcom"})
	soon := time.Now().UTC().Add(72 * time.Hour).Format(time.RFC3339)
	booking := func(uid, start, end string) []byte {
		return []byte(`{"triggerEvent":"BOOKING_CREATED","createdAt":"2026-11-29T09:12:44Z","payload":{"uid":"` + uid +
			`","startTime":"` + start + `","endTime":"` + end + `","length":30,"attendees":[]}}`)
	}
	cases := []struct {
		name   string
		body   []byte
		status int
		code   string
		result string
	}{
		{"null", []byte(`null`), http.StatusBadRequest, "bad_payload", "bad_payload"},
		{"an array", []byte(`[]`), http.StatusBadRequest, "bad_payload", "bad_payload"},
		{"not json", []byte(`<xml/>`), http.StatusBadRequest, "bad_payload", "bad_payload"},
		{"no start", booking("u1", "", ""), http.StatusBadRequest, "bad_payload", "bad_payload"},
		{"a day and more", booking("u2", soon, time.Now().UTC().Add(100*time.Hour).Format(time.RFC3339)), http.StatusBadRequest, "bad_payload", "bad_payload"},
		{"a uid too long for the book", booking(strings.Repeat("u", 400), soon, ""), http.StatusUnprocessableEntity, "invalid_external_id", "rejected"},
		{"a ping", []byte(`{"triggerEvent":"PING","createdAt":"2026-11-29T09:12:44Z","payload":{}}`), http.StatusOK, "", "ignored"},
		{"too large", append([]byte(`{}`), bytes.Repeat([]byte(" "), connectors.MaxBody)...), http.StatusRequestEntityTooLarge, "body_too_large", "ignored"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := w.postCalcom(t, path, secret, c.body)
			require.NoError(t, err)
			require.Equal(t, c.status, a.status, a.raw)
			if c.code != "" {
				require.Equal(t, c.code, a.code(), a.raw)
			}
			if c.status != http.StatusRequestEntityTooLarge {
				require.Equal(t, c.result, w.lastDelivery(id)["result"])
			}
		})
	}
	require.Empty(t, w.openingsOf())
}
