//go:build soak

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
)

// storm is one shop with one opening whose first wave texted size customers, all of
// whom reply YES at once.
type storm struct {
	n       int // its place in the firing order, from 0
	size    int
	shop    loadkit.Shop
	opening string
	phones  []string
	// texted is how many offers were texted when the storm was fired (all of them
	// unless a wave was cut short by a kill and waits for River's rescuer).
	texted int
}

// yes is one YES the soak sent, and what came back.
type yes struct {
	storm    int
	sid      string
	from, to string
	ans      loadkit.Answer
}

type soak struct {
	o     options
	fleet *fleet
	drive *loadkit.Driver
	pool  *pgxpool.Pool
	chaos *chaos
	rng   *rand.Rand

	mu      sync.Mutex
	yeses   []yes
	storms  []*storm
	partial int // storms fired before every offer was texted
}

func (o options) sizeOf(n int) int {
	if o.bigEvery > 0 && n%o.bigEvery == o.bigEvery-1 {
		return o.bigSize
	}
	return o.size
}

// retry calls f with the base URL of an instance that is up, again and again until it
// succeeds or a minute and a half has passed: setting a storm up must ride out kills
// and restarts.
func (s *soak) retry(ctx context.Context, f func(base string) error) error {
	deadline := time.Now().Add(90 * time.Second)
	backoff := 100 * time.Millisecond
	bases := s.fleet.bases()
	for k := 0; ; k++ {
		base := bases[k%len(bases)]
		if up := s.fleet.up(); len(up) > 0 {
			base = bases[up[k%len(up)]]
		}
		err := f(base)
		if err == nil {
			return nil
		}
		var apiErr *loadkit.APIError
		if errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != http.StatusTooManyRequests {
			return err // the request is wrong: retrying cannot help
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}

// prepare sets storm n up: a shop, its customers (through the CSV import), an opening,
// and the wait for its first wave to text them.
func (s *soak) prepare(ctx context.Context, n int) (*storm, error) {
	st := &storm{size: s.o.sizeOf(n)}
	st.phones = s.drive.Phones(st.size)
	err := s.retry(ctx, func(base string) (err error) {
		st.shop, err = s.drive.NewShop(ctx, base, st.size)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create shop: %w", err)
	}
	if err := s.retry(ctx, func(base string) error { return s.drive.Import(ctx, base, st.shop, st.phones) }); err != nil {
		return nil, fmt.Errorf("import customers: %w", err)
	}
	err = s.retry(ctx, func(base string) (err error) {
		// A declaration whose answer was lost (its instance killed) may have been made:
		// never declare a second opening for the shop.
		var list struct {
			Openings []struct {
				ID string `json:"id"`
			} `json:"openings"`
		}
		if err := s.drive.API(ctx, base, http.MethodGet, "/api/openings", st.shop.APIKey, "", nil, &list); err != nil {
			return err
		}
		if len(list.Openings) > 0 {
			st.opening = list.Openings[0].ID
			return nil
		}
		st.opening, err = s.drive.NewOpening(ctx, base, st.shop)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("declare opening: %w", err)
	}
	// Texted: marked sent, or claimed for sending by a first wave that has finished (a
	// wave that texted but could not mark its offers sent, Postgres gone for a moment,
	// leaves them claimed: they are never texted again, and a YES still takes them).
	deadline := time.Now().Add(s.o.offerWait)
	for {
		var sent, claimed, running int
		err := s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'sent'), count(*) FILTER (WHERE status IN ('sent', 'sending')),
			(SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1::text AND args->>'wave' = '1' AND finalized_at IS NULL)
			FROM slot_offers WHERE opening_id = $1::text::uuid`, st.opening).Scan(&sent, &claimed, &running)
		if err == nil {
			st.texted = sent
			if running == 0 {
				st.texted = claimed
			}
		}
		if st.texted >= st.size || ctx.Err() != nil {
			return st, ctx.Err()
		}
		if time.Now().After(deadline) {
			if err != nil {
				say("storm %d: offers not counted: %v", n+1, err)
			}
			return st, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// run prepares the storms a few at a time and fires them one after the other.
func (s *soak) run(runCtx context.Context) error {
	ctx, cancel := context.WithCancel(runCtx)
	defer cancel()
	todo := make(chan int, s.o.storms)
	for n := range s.o.storms {
		todo <- n
	}
	close(todo)
	ready := make(chan *storm, 2)
	errs := make(chan error, s.o.preparers)
	var wg sync.WaitGroup
	for range s.o.preparers {
		wg.Go(func() {
			for n := range todo {
				st, err := s.prepare(ctx, n)
				if err != nil {
					errs <- fmt.Errorf("storm %d: %w", n+1, err)
					cancel()
					return
				}
				select {
				case ready <- st:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(ready) }()

	t0 := time.Now()
	fired := 0
	for st := range ready {
		s.fire(ctx, runCtx, fired, st)
		fired++
		if fired%10 == 0 || fired == s.o.storms {
			s.progress(fired, time.Since(t0))
		}
	}
	select {
	case err := <-errs:
		return err
	default:
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

func (s *soak) fire(ctx, runCtx context.Context, n int, st *storm) {
	forms := make([]url.Values, len(st.phones))
	for i, p := range st.phones {
		forms[i] = s.drive.Yes(p, st.shop.SMSNumber)
	}
	s.mu.Lock()
	s.rng.Shuffle(len(forms), func(i, j int) { forms[i], forms[j] = forms[j], forms[i] })
	s.mu.Unlock()
	s.chaos.storm(runCtx, n)
	answers, _ := s.drive.Fire(ctx, s.fleet.bases(), forms, len(forms), true)
	s.mu.Lock()
	defer s.mu.Unlock()
	st.n = n
	s.storms = append(s.storms, st)
	if st.texted < st.size {
		s.partial++
	}
	for i, a := range answers {
		s.yeses = append(s.yeses, yes{storm: n, sid: forms[i].Get("MessageSid"), from: forms[i].Get("From"), to: forms[i].Get("To"), ans: a})
	}
}

func (s *soak) outcomes() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, y := range s.yeses {
		out[y.ans.Outcome]++
	}
	return out
}

func (s *soak) progress(fired int, took time.Duration) {
	c := s.chaos
	say("storm %d/%d  %s  %v  kills %d restarts %d redis %d postgres %d", fired, s.o.storms, took.Round(time.Second),
		s.outcomes(), c.kills.Load(), c.restarts.Load(), c.redisRestarts.Load(), c.pgRestarts.Load())
}
