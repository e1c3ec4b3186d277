package inbound

import (
	"context"
	"sync"
	"time"
)

// answerDeadline is how long Twilio waits for a webhook's answer (15 s), less a margin.
const answerDeadline = 13 * time.Second

// Answered finishes the answer the webhook has written to Twilio's request for in,
// which arrived at received: it pushes the answer out (flush, which reports whether it
// reached the connection) and marks it heard only if it went out within Twilio's wait.
// The customer hears an answer only if it reaches Twilio in time; one that did not
// stays unmarked, and the sweeper texts it about half a minute later (a booked one: the
// inbound sweeper or the booking sweep, whichever is first).
func (s *Service) Answered(ctx context.Context, in Message, ans Answer, received time.Time, flush func() error) {
	if ans.Message == "" {
		return
	}
	if err := flush(); err != nil {
		s.log.WarnContext(ctx, "answer not written; it will be texted", "outcome", ans.Outcome, "err", err)
		return
	}
	if time.Since(received) >= answerDeadline {
		s.log.WarnContext(ctx, "answer written too late for Twilio; it will be texted", "outcome", ans.Outcome)
		return
	}
	// In the background: the connection is free for Twilio's next request at once.
	s.heardLater(in, ans)
}

// heardLater records, in the background, that ans, the answer Reply gave to in, was
// written back to Twilio in time (see Delivered), and returns at once. The handler
// returns with it: Go's HTTP server reads a connection's next request only once the
// handler of the one before has returned, so a mark written inside the handler held up
// Twilio's next text on that connection. A mark that fails is logged; its customer is
// texted the same answer again by the sweeper. Drain waits for the marks still being
// written.
func (s *Service) heardLater(in Message, ans Answer) {
	s.marking.start()
	go func() {
		defer s.marking.done()
		if err := s.Delivered(context.Background(), in, ans); err != nil {
			s.log.Warn("answer not recorded as written back; it will be texted again", "outcome", ans.Outcome, "err", err)
		}
	}()
}

// Drain waits until every mark Answered started is written (or has failed), or ctx ends.
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
