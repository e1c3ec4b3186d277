package slots_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/problem"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// raceWorld is a shop service and a slots service that both know the payment provider's
// minimum charges, as cmd/server wires them.
type raceWorld struct {
	pool  *pgxpool.Pool
	shops *shops.Service
	slots *slots.Service
}

func newRaceWorld(t *testing.T, maxConns int32) raceWorld {
	t.Helper()
	_, url := pgtest.New(t)
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	queue, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	return raceWorld{
		pool: pool,
		shops: shops.New(pool, shops.Config{PaymentsEnabled: true, ChargesIn: stripe.ChargesIn,
			MinimumCharge: stripe.MinimumCharge}),
		slots: slots.New(pool, queue, noLock{}, noCooldown{}, slots.Config{MinimumCharge: stripe.MinimumCharge}),
	}
}

func (w raceWorld) shop(t *testing.T, currency, mode string) shops.Shop {
	t.Helper()
	s, _, err := w.shops.Create(context.Background(), shops.NewShop{Name: "Race", Timezone: "UTC",
		SMSNumber: "+15550003000", Currency: currency, PaymentMode: mode})
	require.NoError(t, err)
	return s
}

func (w raceWorld) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, w.pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

func opening(price int64, startsIn time.Duration) slots.NewOpening {
	return slots.NewOpening{StartsAt: time.Now().Add(startsIn), DurationMinutes: 30, Service: "Cut", PriceCents: price}
}

// changesToCharges are the changes of a shop's settings that make its open openings'
// prices fall below the payment provider's minimum charge, with a price that is fine
// before the change and not after.
var changesToCharges = []struct {
	name     string
	mode     string // the shop's payment mode before (in dollars)
	change   shops.ShopChange
	price    int64
	currency string // what the refusal names
}{
	{"currency", shops.PaymentCheckout, shops.ShopChange{Currency: ptr("huf")}, 100, "HUF"}, // $1.00; 1 Ft of 175
	{"payment mode", shops.PaymentNone, shops.ShopChange{PaymentMode: ptr(shops.PaymentCheckout)}, 10, "USD"},
}

// TestDeclareWaitsForAChangeOfCharges: an owner changes the shop's currency (or starts
// taking payments) while, from the same owner's other tab, an opening is declared with
// the shop as read before the change. The change has checked the open openings (none)
// and is about to store itself; the declaration, checked against the old settings,
// must wait for it and then be checked again against the new ones: refused, 422, and no
// opening below the new minimum.
func TestDeclareWaitsForAChangeOfCharges(t *testing.T) {
	t.Parallel()
	for _, tc := range changesToCharges {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newRaceWorld(t, 4)
			shop := w.shop(t, "usd", tc.mode)
			ctx := context.Background()
			release := pgtest.PausePoint(t, w.pool, "BEFORE UPDATE", "shops")
			defer release()

			changed := pgtest.Async(func() (shops.Shop, error) { return w.shops.Update(ctx, shop.ID, tc.change) })
			pgtest.WaitUntilWaiting(t, w.pool, pgtest.AtPause, "the change", changed)
			declared := pgtest.Async(func() (slots.Opening, error) { return w.slots.Declare(ctx, shop, opening(tc.price, 5*time.Hour)) })
			pgtest.WaitUntilWaiting(t, w.pool, pgtest.OnARowLock, "the declaration", declared)
			release()

			c := <-changed
			require.NoError(t, c.Err, "the change saw no opening below the minimum: there was none yet")
			d := <-declared
			require.Error(t, d.Err, "the declaration is checked against the shop as changed; it declared %s at price_cents %d",
				d.V.ID, d.V.PriceCents)
			p, ok := problem.As(d.Err)
			require.True(t, ok, "a problem, not %v", d.Err)
			require.Equal(t, problem.Invalid, p.Kind)
			require.Equal(t, "price_cents", p.Field)
			require.Contains(t, p.Message, tc.currency)
			require.Zero(t, w.count(t, `SELECT count(*) FROM slot_openings WHERE shop_id = $1`, shop.ID))
		})
	}
}

// TestChangeOfChargesWaitsForADeclare: the other order. The declaration has inserted
// its opening and not committed yet; the change must wait for it, see the opening and
// be refused (422 openings_below_minimum_charge), leaving the settings as they were.
func TestChangeOfChargesWaitsForADeclare(t *testing.T) {
	t.Parallel()
	for _, tc := range changesToCharges {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newRaceWorld(t, 4)
			shop := w.shop(t, "usd", tc.mode)
			ctx := context.Background()
			release := pgtest.PausePoint(t, w.pool, "AFTER INSERT", "slot_openings")
			defer release()

			declared := pgtest.Async(func() (slots.Opening, error) { return w.slots.Declare(ctx, shop, opening(tc.price, 5*time.Hour)) })
			pgtest.WaitUntilWaiting(t, w.pool, pgtest.AtPause, "the declaration", declared)
			changed := pgtest.Async(func() (shops.Shop, error) { return w.shops.Update(ctx, shop.ID, tc.change) })
			pgtest.WaitUntilWaiting(t, w.pool, pgtest.OnARowLock, "the change", changed)
			release()

			d := <-declared
			require.NoError(t, d.Err)
			c := <-changed
			p, ok := problem.As(c.Err)
			require.True(t, ok, "the change sees the opening declared before it, not %+v", c)
			require.Equal(t, shops.CodeBelowMinimumCharge, p.Code)
			require.Contains(t, p.Message, d.V.ID.String())
			got, err := w.shops.Get(ctx, shop.ID)
			require.NoError(t, err)
			require.Equal(t, "usd", got.Currency)
			require.Equal(t, tc.mode, got.PaymentMode)
		})
	}
}

// TestDeclaresRacingAChangeOfCurrency: round after round, many openings priced for
// dollars are declared with the shop as read in dollars while the owner switches the
// shop to forints (in every other round, the switch starts a moment before the
// declarations). Whatever the interleaving, no open opening is left below the minimum
// of the currency the shop ends in, and nothing deadlocks.
func TestDeclaresRacingAChangeOfCurrency(t *testing.T) {
	t.Parallel()
	const rounds, declares = 12, 16
	w := newRaceWorld(t, 12)
	ctx := context.Background()
	shop := w.shop(t, "usd", shops.PaymentCheckout)
	switched := 0
	for round := range rounds {
		var wg sync.WaitGroup
		start, switching := make(chan struct{}), make(chan struct{})
		errs := make(chan error, declares+1)
		for i := range declares {
			wg.Go(func() {
				<-start
				if round%2 == 1 {
					<-switching // a head start for the switch, in every other round
				}
				_, err := w.slots.Declare(ctx, shop, opening(100, 5*time.Hour+time.Duration(round*declares+i)*time.Minute))
				if p, ok := problem.As(err); ok && p.Field == "price_cents" {
					err = nil // declared after the switch: refused, as it should be
				}
				errs <- err
			})
		}
		wg.Go(func() {
			<-start
			close(switching)
			_, err := w.shops.Update(ctx, shop.ID, shops.ShopChange{Currency: ptr("huf")})
			if p, ok := problem.As(err); ok && p.Code == shops.CodeBelowMinimumCharge {
				err = nil // an opening came first: refused, as it should be
			}
			errs <- err
		})
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}

		now, err := w.shops.Get(ctx, shop.ID)
		require.NoError(t, err)
		below := w.count(t, `SELECT count(*) FROM slot_openings WHERE shop_id = $1 AND status = 'open' AND price_cents < $2`,
			shop.ID, stripe.MinimumCharge(now.Currency))
		require.Zero(t, below, "round %d: open openings below the minimum charge in %s", round, now.Currency)

		// Back to dollars, with no open opening, for the next round.
		if now.Currency == "huf" {
			switched++
		}
		_, err = w.pool.Exec(ctx, `UPDATE slot_openings SET status = 'cancelled' WHERE shop_id = $1 AND status = 'open'`, shop.ID)
		require.NoError(t, err)
		_, err = w.shops.Update(ctx, shop.ID, shops.ShopChange{Currency: ptr("usd")})
		require.NoError(t, err)
	}
	t.Logf("the switch won %d of %d rounds", switched, rounds)
}
