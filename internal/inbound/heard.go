package inbound

import (
	"context"
	"sync"
)

// Heard records, in the background, that ans, the answer Reply gave to in, was written
// back to Twilio in time (see Delivered), and returns at once. The handler returns with
// it: Go's HTTP server reads a connection's next request only once the handler of the
// one before has returned, so a mark written inside the handler held up Twilio's next
// text on that connection. A mark that fails is logged; its customer is texted the
// same answer again by the sweeper. Drain waits for the marks still being written.
func (s *Service) Heard(in Message, ans Answer) {
	s.marking.start()
	go func() {
		defer s.marking.done()
		if err := s.Delivered(context.Background(), in, ans); err != nil {
			s.log.Warn("answer not recorded as written back; it will be texted again", "outcome", ans.Outcome, "err", err)
		}
	}()
}

// Drain waits until every mark Heard started is written (or has failed), or ctx ends.
// The server calls it after its requests have finished and before closing the pool.
func (s *Service) Drain(ctx context.Context) error {
	return s.marking.wait(ctx)
}

// pending counts work in flight and lets callers wait until there is none. Unlike a
// sync.WaitGroup, new work may start while someone waits (a request that outlives the
// server's shutdown deadline still records its mark).
type pending struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0; nil before the first start
}

func (p *pending) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		p.idle = make(chan struct{})
	}
	p.n++
}

func (p *pending) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n--
	if p.n == 0 {
		close(p.idle)
	}
}

func (p *pending) wait(ctx context.Context) error {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
