package offers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/db"
)

// marker marks a chunk's offers sent as their texts are accepted. While one statement
// runs, the texts accepted meanwhile wait for the next; and while more of the chunk's
// texts are on their way, a statement waits markLinger for them. So a long code's text
// (a chunk of one) is marked by its own statement at once, and a thousand texts a
// second by a statement for many. A text is claimable only once marked: the linger
// delays that by a few milliseconds, never the other way round.
type marker struct {
	s      *Service
	ctx    context.Context
	expect int // texts of the chunk

	mu       sync.Mutex
	ids      []uuid.UUID // accepted, waiting for a statement
	sids     []string
	running  bool
	done     sync.WaitGroup
	added    int      // texts accepted
	reported []string // message ids marked whose delivery reports came before
	err      error
}

// A failed mark is tried again markRetries times, markBackoff, then twice and four
// times that apart. A mark waits up to markLinger for more of its chunk's texts, unless
// markBatch are waiting already.
const (
	markRetries = 3
	markBackoff = 200 * time.Millisecond
	markLinger  = 5 * time.Millisecond
	markBatch   = 64
)

// add queues the mark of an accepted text ("" when its outcome is unknown) and starts a
// statement if none is running.
func (m *marker) add(id uuid.UUID, sid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids, m.sids = append(m.ids, id), append(m.sids, sid)
	m.added++
	if !m.running {
		m.running = true
		m.done.Add(1)
		go m.run()
	}
}

// run marks what is queued, statement after statement, until nothing is.
func (m *marker) run() {
	defer m.done.Done()
	lingered := false
	for {
		m.mu.Lock()
		if !lingered && len(m.ids) < markBatch && m.added < m.expect {
			m.mu.Unlock()
			time.Sleep(markLinger) // more of the chunk's texts are coming
			lingered = true
			continue
		}
		lingered = false
		ids, sids := m.ids, m.sids
		m.ids, m.sids = nil, nil
		if len(ids) == 0 {
			m.running = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		// A mark that fails leaves accepted texts neither claimable nor counted until a
		// later attempt settles them (without their message ids): a short outage is
		// waited out here.
		reported, err := m.s.markSent(m.ctx, ids, sids)
		for try := 0; err != nil && try < markRetries; try++ {
			time.Sleep(markBackoff << try)
			reported, err = m.s.markSent(m.ctx, ids, sids)
		}
		m.mu.Lock()
		if err != nil {
			m.err = errors.Join(m.err, err)
		} else {
			m.reported = append(m.reported, reported...)
		}
		m.mu.Unlock()
	}
}

// wait returns, once every queued mark is done, the message ids marked whose delivery
// reports came before the mark, and the errors. No add may come after it.
func (m *marker) wait() ([]string, error) {
	m.done.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reported, m.err
}

// count is how many texts were accepted (or may have been), marked or not.
func (m *marker) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.added
}

// The claim and the mark each change many offers of one opening, while a YES (losing
// the opening's other offers) or a cancel (closing its queued ones) locks the same rows
// in an order of its own. A statement that waits for a row while holding others can
// close a cycle with those, and Postgres aborts one of them: a YES answered with an
// error, or a wave that fails. So the many-row statements here never wait (SKIP
// LOCKED), and what they skipped is done one row per statement, each waiting while it
// holds nothing else.

// claim claims the given queued offers for sending and returns those this sender got.
func (s *Service) claim(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	now := s.cfg.Now().UTC()
	claimed, err := queries.OfferClaimManyForSending(ctx, s.pool, db.OfferClaimManyForSendingParams{Ids: ids, Now: now})
	if err != nil {
		return nil, fmt.Errorf("claim offers: %w", err)
	}
	if len(claimed) == len(ids) {
		return claimed, nil
	}
	// Offers another run claimed, or that can no longer be texted, are not queued and
	// claimable any more; those still are were held by another statement a moment ago.
	skipped, err := queries.OfferListStillQueued(ctx, s.pool, except(ids, claimed))
	if err != nil {
		return nil, fmt.Errorf("list offers still queued: %w", err)
	}
	for _, id := range skipped {
		n, err := queries.OfferClaimForSending(ctx, s.pool, db.OfferClaimForSendingParams{ID: id, Now: now})
		if err != nil {
			return nil, fmt.Errorf("claim offer: %w", err)
		}
		if n == 1 {
			claimed = append(claimed, id)
		}
	}
	return claimed, nil
}

// markSent records that the provider accepted the texts of claimed offers, with their
// message ids ("" when the outcome of the send is unknown), and returns the ids whose
// delivery reports may have come before (to apply them).
func (s *Service) markSent(ctx context.Context, ids []uuid.UUID, sids []string) ([]string, error) {
	now := s.cfg.Now().UTC()
	rows, err := queries.OfferMarkManySent(ctx, s.pool, db.OfferMarkManySentParams{Ids: ids, Sids: sids, Now: now})
	if err != nil {
		return nil, fmt.Errorf("mark offers sent: %w", err)
	}
	sidOf := make(map[uuid.UUID]string, len(ids))
	for i, id := range ids {
		sidOf[id] = sids[i]
	}
	var reported []string
	marked := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		marked[i] = r.ID
		if r.Reported {
			reported = append(reported, sidOf[r.ID])
		}
	}
	if len(marked) == len(ids) {
		return reported, nil
	}
	// Offers not marked yet were held by another statement a moment ago (or were
	// settled by another run: then they need nothing).
	left, err := queries.OfferListSending(ctx, s.pool, except(ids, marked))
	if err != nil {
		return reported, fmt.Errorf("list offers still sending: %w", err)
	}
	for _, id := range left {
		if err := queries.OfferMarkSent(ctx, s.pool, db.OfferMarkSentParams{ID: id, Sid: sidOf[id], Now: now}); err != nil {
			return reported, fmt.Errorf("mark offer sent: %w", err)
		}
		if sidOf[id] != "" {
			reported = append(reported, sidOf[id]) // not asked: applying finds out
		}
	}
	return reported, nil
}

// except returns the ids not in done.
func except(ids, done []uuid.UUID) []uuid.UUID {
	skip := make(map[uuid.UUID]bool, len(done))
	for _, id := range done {
		skip[id] = true
	}
	var out []uuid.UUID
	for _, id := range ids {
		if !skip[id] {
			out = append(out, id)
		}
	}
	return out
}
