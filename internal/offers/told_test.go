package offers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/offers"
	"github.com/slotrecovery/slotrecovery/internal/pacing"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/testkit/redistest"
)

// gateTexter holds the texts to some numbers (or every text after the first pass ones)
// before they reach the provider until open is called: a wave has claimed their offers
// and not texted them yet.
type gateTexter struct {
	next offers.Texter
	to   map[string]bool
	pass int // when to is empty: how many texts go through before the gate holds them
	gate chan struct{}
	once sync.Once
	mu   sync.Mutex
	seen int
}

func newGate(next offers.Texter, to ...string) *gateTexter {
	g := &gateTexter{next: next, to: map[string]bool{}, gate: make(chan struct{})}
	for _, n := range to {
		g.to[n] = true
	}
	return g
}

func (g *gateTexter) Text(ctx context.Context, m sms.Message) (string, error) {
	g.mu.Lock()
	g.seen++
	hold := g.to[m.To] || (len(g.to) == 0 && g.seen > g.pass)
	g.mu.Unlock()
	if hold {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return g.next.Text(ctx, m)
}

func (g *gateTexter) open() { g.once.Do(func() { close(g.gate) }) }

// TestYesBooksOnlyWhatTheCustomerWasTold: while a wave is texting, the offers it has
// claimed but whose texts have not gone out are not the customers' to take. A customer
// who replies YES to an earlier text is booked into the slot that text told them of,
// not into a newer one they were never told about; the opening counts as texted
// (offers_sent) each offer whose text the provider accepted, as soon as it did, and
// every text that went out, whatever became of its offer.
func TestYesBooksOnlyWhatTheCustomerWasTold(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, shops.Policy{WaveSize: 3, WaveInterval: time.Hour, MinLead: time.Hour, Cooldown: time.Hour})
	cs := w.customers(t, shop, 3)
	ctx := context.Background()

	// Opening A: all three are texted.
	a := w.declare(t, shop, 5*time.Hour)
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: a.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 3, res.Texted)

	// Opening B, a minute later: the wave claims all three offers; the third customer's
	// text is held.
	w.clock.Set(w.clock.Now().Add(time.Minute))
	b := w.declare(t, shop, 6*time.Hour)
	gate := newGate(w.texter, cs[2].Phone)
	t.Cleanup(gate.open)
	svc := offers.New(w.pool, w.queue, gate, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: w.clock.Now})
	done := make(chan waveRun, 1)
	go func() {
		res, err := svc.RunWave(ctx, jobs.Wave{OpeningID: b.ID, Generation: 1, Wave: 1})
		done <- waveRun{res, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(w.twilio.MessagesTo(cs[0].Phone)) < 2 || len(w.twilio.MessagesTo(cs[1].Phone)) < 2 {
		require.True(t, time.Now().Before(deadline), "the wave did not text the first two customers of B within 30 s")
		time.Sleep(5 * time.Millisecond)
	}
	require.Len(t, w.twilio.MessagesTo(cs[2].Phone), 1, "only A's text reached the third customer")

	// The two texts the provider accepted count, while the wave is still going.
	var sent int
	for time.Now().Before(deadline) {
		got, err := w.slots.Get(ctx, shop.ID, b.ID)
		require.NoError(t, err)
		if sent = got.OffersSent; sent == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, 2, sent, "offers_sent of B while its third text waits")

	// The third customer answers the only text they have: A's. Their offer of B is
	// newer but was never texted.
	ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMyes2", From: cs[2].Phone, To: shop.SMSNumber, Body: "YES"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.Equal(t, a.ID, bookedOpening(t, w, cs[2].ID), "booked into the slot their text told them of")

	// The claim itself refuses the untexted offer, whatever its caller read.
	claim, err := w.slots.BookClaimable(ctx, &shop, cs[2].ID, slots.Claimable{Live: []slots.LiveOffer{{
		OfferID: offerOf(t, w, b.ID, cs[2].ID), OpeningID: b.ID, Generation: 1, StartsAt: b.StartsAt,
	}}})
	require.NoError(t, err)
	require.NotEqual(t, slots.Booked, claim.Outcome, "an offer whose text has not gone out is not claimable")

	// The second customer was texted B: their YES takes it.
	claim, err = w.slots.Book(ctx, &shop, cs[1].ID)
	require.NoError(t, err)
	require.Equal(t, slots.Booked, claim.Outcome)
	require.Equal(t, b.ID, claim.OpeningID)

	// B's third text goes out after all (the slot is gone by then): it was sent, and
	// counts, though its offer was lost meanwhile.
	gate.open()
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, 3, r.res.Texted)
	require.Len(t, w.twilio.MessagesTo(cs[2].Phone), 2)
	got, err := w.slots.Get(ctx, shop.ID, b.ID)
	require.NoError(t, err)
	require.Equal(t, 3, got.OffersSent, "every text that went out counts, the accepted and lost offers' too")
	require.Equal(t, map[string]int{"accepted": 1, "lost": 2}, w.offerStatuses(t, b.ID))
	var noID int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM slot_offers WHERE opening_id = $1 AND twilio_sid IS NULL`, b.ID).Scan(&noID))
	require.Zero(t, noID, "each texted offer keeps its message id, for its delivery reports")
}

// TestPacedWaveClaimsASecondAtATime: a paced wave claims a second's worth of its
// sender's texts at a time, so that at a long code's one text a second no offer waits
// claimed, neither texted nor claimable, for longer than its turn.
func TestPacedWaveClaimsASecondAtATime(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rdb, prefix := redistest.New(t)
	shop := w.shop(t, shops.Policy{WaveSize: 3, WaveInterval: time.Hour, MinLead: time.Hour, Cooldown: time.Hour, SendRate: 1})
	cs := w.customers(t, shop, 3)
	op, err := w.slots.Declare(context.Background(), shop, slots.NewOpening{
		StartsAt: time.Now().Add(5 * time.Hour), DurationMinutes: 45, Service: "Colour", PriceCents: 6000,
	})
	require.NoError(t, err)
	// The second text is held at the gate: the first went out, the third must not be
	// claimed while the second waits.
	gate := newGate(w.texter)
	gate.pass = 1
	t.Cleanup(gate.open)
	svc := offers.New(w.pool, w.queue, gate, w.cool, w.shops, w.cust, w.slots, offers.Config{Now: time.Now, Pacer: pacing.New(rdb, prefix)})
	done := make(chan waveRun, 1)
	go func() {
		res, err := svc.RunWave(context.Background(), jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
		done <- waveRun{res, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := w.offerStatuses(t, op.ID)
		if st["sent"] == 1 && st["sending"] > 0 {
			require.Equal(t, map[string]int{"sent": 1, "sending": 1, "queued": 1}, st, "one offer claimed at a time at one text a second")
			break
		}
		require.True(t, time.Now().Before(deadline), "the wave did not text its first customer and claim the second within 30 s: %v", st)
		time.Sleep(10 * time.Millisecond)
	}
	gate.open()
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, 3, r.res.Texted)
	for _, c := range cs {
		require.Len(t, w.twilio.MessagesTo(c.Phone), 1)
	}
}

func bookedOpening(t *testing.T, w *world, customerID uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, w.pool.QueryRow(context.Background(),
		`SELECT opening_id FROM bookings WHERE customer_id = $1 AND status IN ('pending_payment', 'confirmed')`, customerID).Scan(&id))
	return id
}

func offerOf(t *testing.T, w *world, openingID, customerID uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, w.pool.QueryRow(context.Background(),
		`SELECT id FROM slot_offers WHERE opening_id = $1 AND customer_id = $2`, openingID, customerID).Scan(&id))
	return id
}

// TestKilledWavesOffersSettledWhateverTheOpening: a wave killed mid-send leaves offers
// claimed (sending). If the opening is cancelled, expires or is reopened (a new
// generation) before the rescued run, that run stops at once; it still settles them
// (sent, outcome unknown: never texted again), rather than leave them claimed for ever.
func TestKilledWavesOffersSettledWhateverTheOpening(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]string{
		"cancelled": `UPDATE slot_openings SET status = 'cancelled' WHERE id = $1`,
		"expired":   `UPDATE slot_openings SET status = 'expired' WHERE id = $1`,
		"reopened":  `UPDATE slot_openings SET generation = generation + 1 WHERE id = $1`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			shop := w.shop(t, policy)
			cs := w.customers(t, shop, 2)
			op := w.declare(t, shop, 5*time.Hour)
			ctx := context.Background()
			wave := jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1}
			// The run claimed both offers and was killed before any text's answer came.
			w.twilio.FailNext(2, 20500, 500)
			_, err := w.offers.RunWave(ctx, wave)
			require.Error(t, err)
			_, err = w.pool.Exec(ctx, `UPDATE slot_offers SET status = 'sending', claimed_at = $2 WHERE opening_id = $1`, op.ID, w.clock.Now())
			require.NoError(t, err)
			_, err = w.pool.Exec(ctx, change, op.ID)
			require.NoError(t, err)

			// River's rescue, long after the claims.
			w.clock.Set(w.clock.Now().Add(10 * time.Minute))
			res, err := w.offers.RunWave(ctx, wave)
			require.NoError(t, err)
			require.NotEmpty(t, res.Stopped, "the run stops: the opening moved on")
			require.Equal(t, map[string]int{"sent": 2}, w.offerStatuses(t, op.ID), "nothing left claimed")
			for _, c := range cs {
				require.Empty(t, w.twilio.MessagesTo(c.Phone), "never texted by the rescue")
			}
		})
	}
}

// TestOffersSentIsTheSameEverywhere: the owner's API and dashboard count the same texts
// as sent: every offer whose text the provider accepted, including one the carrier
// later failed to deliver (the text went out; its offer no longer counts as offered).
func TestOffersSentIsTheSameEverywhere(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	shop := w.shop(t, policy)
	cs := w.customers(t, shop, 2)
	op := w.declare(t, shop, 5*time.Hour)
	ctx := context.Background()
	res, err := w.offers.RunWave(ctx, jobs.Wave{OpeningID: op.ID, Generation: 1, Wave: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Texted)
	require.NoError(t, w.reports.RecordDelivery(ctx, sms.DeliveryReport{MessageID: w.sidTo(t, cs[0].Phone),
		Status: sms.DeliveryUndelivered, Reason: sms.ReasonOther, ErrorCode: 30003}))
	require.Equal(t, map[string]int{"failed": 1, "sent": 1}, w.offerStatuses(t, op.ID))

	got, err := w.slots.Get(ctx, shop.ID, op.ID)
	require.NoError(t, err)
	require.Equal(t, 2, got.OffersSent, "the API: two texts went out")
	open, err := db.New().DashboardOpenList(ctx, w.pool, db.DashboardOpenListParams{ShopID: shop.ID, MaxRows: 10})
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, int32(got.OffersSent), open[0].OffersSent, "the dashboard counts what the API counts")
}
