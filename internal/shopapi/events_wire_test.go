package shopapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/shopapi"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/hookstest"
)

// grantAll is a slot lock that grants every caller (one YES here: nothing to contend).
type grantAll struct{}

func (grantAll) TryLock(context.Context, string, time.Duration) (func(string), error) {
	return func(string) {}, nil
}
func (grantAll) Watch(string) (<-chan string, func()) { return nil, func() {} }
func (grantAll) Recent(string) []string               { return nil }

type noCooldowns struct{}

func (noCooldowns) Start(context.Context, string, time.Duration) error { return nil }

// TestOpeningEventIsTheAPIsOpening: an opening's webhook data is GET
// /api/openings/{id}'s answer, field for field, for the events Go renders in a
// transaction (opening.declared, opening.cancelled) and for the YES's claim, which
// renders opening.filled before its one statement runs: a person's opening, an offer of
// another service at another price, offers texted, the booking the claim made.
func TestOpeningEventIsTheAPIsOpening(t *testing.T) {
	t.Parallel()
	var svc *hooks.Service
	var queue jobs.Inserter
	e := newEnvWith(t, func(h *shopapi.Handlers, pool *pgxpool.Pool, q jobs.Inserter) {
		h.Hooks = hooks.New(pool, q, hooks.Config{DevMode: true, AllowPrivate: true, PollEvery: 20 * time.Millisecond})
		svc, queue = h.Hooks, q
	})
	shopID, key := e.shop("+15555550100")
	rcv := hookstest.NewReceiver(t)
	r := e.do(http.MethodPost, "/api/webhook_endpoints", key, map[string]any{"url": rcv.URL()})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	rcv.SetSecrets(r.body["secret"].(string))
	hookstest.Deliver(t, e.pool, svc, hookstest.RiverConfig{})
	ctx := context.Background()

	r = e.do(http.MethodPost, "/api/staff", key, map[string]any{"name": "Ana"})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	staffID := r.body["id"].(string)
	body := validOpening()
	body["staff_id"] = staffID
	r = e.do(http.MethodPost, "/api/openings", key, body)
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	id := uuid.MustParse(r.body["id"].(string))
	declaredGET := e.do(http.MethodGet, "/api/openings/"+id.String(), key, nil).raw

	// Bea was texted an offer of another service, at another price, for the whole gap.
	bea := uuid.MustParse(e.customer(key, map[string]any{"phone": "+15555550111", "name": "Bea Smith", "sms_opt_in": true}))
	_, err := e.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at,
		service, duration_minutes, price_cents) VALUES ($1, $2, $3, 1, 1, 'sent', now(), now(), 'Beard trim', 45, 2500)`,
		id, bea, uuid.MustParse(shopID))
	require.NoError(t, err)
	shop, err := e.h.Shops.Get(ctx, uuid.MustParse(shopID))
	require.NoError(t, err)
	claim, err := slots.New(e.pool, queue, grantAll{}, noCooldowns{}, slots.Config{}).Book(ctx, &shop, bea)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome)
	claim.Settle()
	filledGET := e.do(http.MethodGet, "/api/openings/"+id.String(), key, nil).raw

	// Another opening, cancelled.
	other := e.opening(key)["id"].(string)
	r = e.do(http.MethodPost, "/api/openings/"+other+"/cancel", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	cancelledGET := e.do(http.MethodGet, "/api/openings/"+other, key, nil).raw

	got := hookstest.InRecordedOrder(t, e.pool, rcv.WaitFor(t, 4, 30*time.Second))
	require.Empty(t, rcv.Unverified())
	require.Equal(t, []string{hooks.OpeningDeclared, hooks.OpeningFilled, hooks.OpeningDeclared, hooks.OpeningCancelled}, hookstest.Types(got))
	for _, ev := range got {
		checkEvent(t, ev)
	}
	require.JSONEq(t, declaredGET, string(got[0].Data))
	require.JSONEq(t, filledGET, string(got[1].Data))
	require.JSONEq(t, cancelledGET, string(got[3].Data))
	require.Contains(t, string(got[1].Data), `"Beard trim"`)
	require.Contains(t, string(got[1].Data), `"Ana"`)
	require.Contains(t, string(got[1].Data), claim.BookingID.String())
}
