//go:build soak

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// liveStates are the River job states that will still run.
var liveStates = []string{"available", "scheduled", "retryable", "pending"}

// job is a River job as the checks see it.
type job struct {
	kind, state, client string
	finalized           *time.Time
}

// orphaned reports whether j is running on a process the soak killed: River's rescuer
// retries it only RescueStuckJobsAfter (7 min since this change; 15 before) after it started.
func (s *soak) orphaned(j job) bool { return j.state == "running" && s.fleet.dead(j.client) }

// alive reports whether j will run, or is running on a process that is alive.
func (s *soak) alive(j job) bool {
	return slices.Contains(liveStates, j.state) || (j.state == "running" && !s.fleet.dead(j.client))
}

func (s *soak) jobs(ctx context.Context, where string, args ...any) ([]job, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, state::text, COALESCE(attempted_by[cardinality(attempted_by)], ''), finalized_at
		FROM river_job WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (job, error) {
		var j job
		return j, r.Scan(&j.kind, &j.state, &j.client, &j.finalized)
	})
}

// pendingBooking is a booking waiting for its payment.
type pendingBooking struct {
	id        string
	expiresAt *time.Time
	linked    bool
}

func (s *soak) pendingBookings(ctx context.Context) ([]pendingBooking, error) {
	rows, err := s.pool.Query(ctx, `SELECT id::text, checkout_expires_at, payment_url IS NOT NULL FROM bookings WHERE status = 'pending_payment'`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (pendingBooking, error) {
		var b pendingBooking
		return b, r.Scan(&b.id, &b.expiresAt, &b.linked)
	})
}

// sweepAlive reports whether the periodic booking sweep, which makes the payment links
// the YES path could not, still runs: a run waiting, running on a live process, or
// finished in the last minute (it runs every 10 s).
func (s *soak) sweepAlive(ctx context.Context) (bool, error) {
	sweeps, err := s.jobs(ctx, `kind = 'bookings_sweep' ORDER BY id DESC LIMIT 10`)
	if err != nil {
		return false, err
	}
	for _, j := range sweeps {
		if s.alive(j) || (j.finalized != nil && time.Since(*j.finalized) < time.Minute) {
			return true, nil
		}
	}
	return false, nil
}

// healState is what the heal phase waits on.
type healState struct {
	down, unanswered, linksComing, due int
}

func (h healState) healed() bool {
	return h.down == 0 && h.unanswered == 0 && h.linksComing == 0 && h.due == 0
}

func (h healState) String() string {
	return fmt.Sprintf("instances down %d, texts without an outcome or whose answer is still to be texted %d, payment links still coming %d, River jobs overdue %d",
		h.down, h.unanswered, h.linksComing, h.due)
}

// unheardSQL counts the stored answers the sweeper has still to text: neither marked as
// written back over HTTP nor retold, under the conditions the sweeper texts them
// (inbound's InboundListUnheard: a shop, a reply and a number; at most 30 min old).
const unheardSQL = `SELECT count(*) FROM inbound_messages WHERE outcome IS NOT NULL AND answered_at IS NULL AND retold_at IS NULL
	AND shop_id IS NOT NULL AND reply <> '' AND from_phone <> '' AND handled_at > now() - interval '30 minutes'`

func (s *soak) healState(ctx context.Context) (healState, error) {
	var h healState
	for _, base := range s.fleet.bases() {
		res, err := s.drive.Client.Get(base + "/readyz")
		if err != nil {
			h.down++
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			h.down++
		}
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE outcome IS NULL OR handled_at IS NULL`).Scan(&h.unanswered); err != nil {
		return h, err
	}
	var unheard int
	if err := s.pool.QueryRow(ctx, unheardSQL).Scan(&unheard); err != nil {
		return h, err
	}
	h.unanswered += unheard
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state IN ('available', 'retryable') AND scheduled_at < now() - interval '10 seconds'`).Scan(&h.due); err != nil {
		return h, err
	}
	pending, err := s.pendingBookings(ctx)
	if err != nil {
		return h, err
	}
	sweeping, err := s.sweepAlive(ctx)
	if err != nil {
		return h, err
	}
	for _, b := range pending {
		if !b.linked && sweeping {
			h.linksComing++
		}
	}
	return h, nil
}

// heal waits until every instance is up, every stored text has its outcome, every
// payment link the booking sweep owes is made and no River job is overdue, or until the
// deadline. What cannot heal in time (a job orphaned by a kill waits 7 min for River's
// rescuer) is left for the checks to report.
func (s *soak) heal(ctx context.Context) (took time.Duration, last healState, ok bool) {
	t0 := time.Now()
	deadline := t0.Add(s.o.heal)
	lastSaid := t0
	for {
		h, err := s.healState(ctx)
		if err == nil {
			last = h
			if h.healed() {
				return time.Since(t0), h, true
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Since(t0), last, false
		}
		if time.Since(lastSaid) >= 30*time.Second {
			say("healing (%s): %s", time.Since(t0).Round(time.Second), last)
			lastSaid = time.Now()
		}
		time.Sleep(2 * time.Second)
	}
}

// report is what the checks found.
type report struct {
	// must be 0
	doubleBooked, toldBookedTwice, toldBookedNoBooking int
	unanswered, storedUnheard                          int
	sentTwice                                          int
	pastHoldStuck, noLinkNoJob                         int
	// twilioViolations is what broke Twilio's contract: requests the servers sent the
	// Twilio fake, its answers and its status callbacks.
	twilioViolations []twiliofake.Violation

	// figures
	offerTexts, otherTexts, repeatedOther, textedUnrecorded int
	noAnswer, noAnswerNotStored, noAnswerSwept              int
	noAnswerRetold, bookedUnheard, heardTwice               int
	retoldPending                                           int
	unheardByOutcome, retryThenText                         map[string]int
	openingsBooked, openingsOpen                            int
	pending, pendingPastHold, noLink                        int
	reconcileAlive, sweepAlive                              bool
	orphans                                                 map[string]int
	offersSending                                           int
	unheard                                                 []string
}

func (r report) failures() int {
	return r.doubleBooked + r.toldBookedTwice + r.toldBookedNoBooking + r.unanswered + r.storedUnheard +
		r.sentTwice + r.repeatedOther + r.pastHoldStuck + r.noLinkNoJob + len(r.twilioViolations) +
		r.noAnswerNotStored + r.heardTwice
}

func (s *soak) check(ctx context.Context, tw *twiliofake.Server) (report, error) {
	r := report{unheardByOutcome: map[string]int{}, orphans: map[string]int{}, retryThenText: map[string]int{},
		twilioViolations: tw.TakeViolations()}
	q := func(sql string, dst ...any) error { return s.pool.QueryRow(ctx, sql).Scan(dst...) }

	// Double bookings: in Postgres, and as customers were told.
	if err := q(`SELECT count(*) FROM (SELECT opening_id FROM bookings WHERE status IN ('pending_payment', 'confirmed')
		GROUP BY opening_id HAVING count(*) > 1) d`, &r.doubleBooked); err != nil {
		return r, err
	}
	// Each shop of the soak has one opening: the texts to its number are about it.
	if err := q(`SELECT count(*) FROM (SELECT to_phone FROM inbound_messages WHERE outcome = 'booked'
		GROUP BY to_phone HAVING count(DISTINCT from_phone) > 1) d`, &r.toldBookedTwice); err != nil {
		return r, err
	}
	if err := q(`SELECT count(DISTINCT m.from_phone || m.to_phone) FROM inbound_messages m
		JOIN shops s ON s.sms_number = m.to_phone JOIN customers c ON c.shop_id = s.id AND c.phone = m.from_phone
		WHERE m.outcome = 'booked' AND NOT EXISTS (SELECT 1 FROM bookings b WHERE b.customer_id = c.id
			AND b.status IN ('pending_payment', 'confirmed'))`, &r.toldBookedNoBooking); err != nil {
		return r, err
	}
	if err := q(`SELECT count(*) FILTER (WHERE status = 'filled'), count(*) FILTER (WHERE status = 'open') FROM slot_openings`,
		&r.openingsBooked, &r.openingsOpen); err != nil {
		return r, err
	}

	// Texts: the fake recorded every message it accepted. One offer row per (opening,
	// generation, customer); a row still queued or failed was never accepted by Twilio.
	type pair struct{ from, to string }
	rows, err := s.pool.Query(ctx, `SELECT s.sms_number, c.phone, count(*), array_agg(COALESCE(o.twilio_sid, ''))
		FROM slot_offers o JOIN shops s ON s.id = o.shop_id JOIN customers c ON c.id = o.customer_id
		WHERE o.status NOT IN ('queued', 'failed') GROUP BY 1, 2`)
	if err != nil {
		return r, err
	}
	var p pair
	var n int
	var rowSIDs []string
	recorded := map[string]bool{}
	rowsOf := map[pair]int{}
	if _, err := pgx.ForEachRow(rows, []any{&p.from, &p.to, &n, &rowSIDs}, func() error {
		rowsOf[p] = n
		for _, sid := range rowSIDs {
			recorded[sid] = true
		}
		return nil
	}); err != nil {
		return r, err
	}
	offers := map[pair]int{}
	others := map[string]int{}
	heard := map[pair]bool{} // a text other than an offer reached the customer
	for _, m := range tw.Messages() {
		// An offer is a text whose SID an offer row holds, or one worded as an offer (a
		// crash between Twilio's answer and the row's update leaves the SID unrecorded).
		if recorded[m.SID] || strings.HasSuffix(m.Body, ". Reply YES to book. STOP to opt out") {
			r.offerTexts++
			offers[pair{m.From, m.To}]++
			if !recorded[m.SID] {
				r.textedUnrecorded++
			}
			continue
		}
		r.otherTexts++
		heard[pair{m.From, m.To}] = true
		if others[m.From+"|"+m.To+"|"+m.Body]++; others[m.From+"|"+m.To+"|"+m.Body] == 2 {
			r.repeatedOther++
		}
	}
	for k, texted := range offers {
		r.sentTwice += max(0, texted-rowsOf[k])
	}
	if err := q(`SELECT count(*) FROM slot_offers WHERE status = 'sending'`, &r.offersSending); err != nil {
		return r, err
	}

	// Every stored text has its outcome; and a YES whose HTTP answer was lost (its
	// instance killed mid-request, before or after its answer was stored) was answered
	// by text, or will be, whatever the answer.
	if err := q(`SELECT count(*) FROM inbound_messages WHERE outcome IS NULL OR handled_at IS NULL`, &r.unanswered); err != nil {
		return r, err
	}
	if err := q(unheardSQL, &r.retoldPending); err != nil {
		return r, err
	}
	queued := map[pair]bool{}
	textJobs, err := s.pool.Query(ctx, `SELECT COALESCE(args->>'from', ''), COALESCE(args->>'to', ''), state::text,
		COALESCE(attempted_by[cardinality(attempted_by)], '') FROM river_job WHERE kind = 'sms_text' AND state <> 'completed'`)
	if err != nil {
		return r, err
	}
	var j job
	if _, err := pgx.ForEachRow(textJobs, []any{&p.from, &p.to, &j.state, &j.client}, func() error {
		if s.alive(j) || s.orphaned(j) {
			queued[p] = true
		}
		return nil
	}); err != nil {
		return r, err
	}
	s.mu.Lock()
	lost := []yes{}
	for _, y := range s.yeses {
		if (y.ans.Err != nil && !loadkit.NotSent(y.ans.Err)) || strings.HasPrefix(y.ans.Outcome, "http_") {
			lost = append(lost, y)
		}
	}
	s.mu.Unlock()
	r.noAnswer = len(lost)
	type stored struct {
		outcome           *string
		reply             string
		takenOver, retold bool
	}
	inbound := map[string]stored{}
	rows, err = s.pool.Query(ctx, `SELECT message_sid, outcome, COALESCE(reply, ''), taken_over_at IS NOT NULL, retold_at IS NOT NULL FROM inbound_messages`)
	if err != nil {
		return r, err
	}
	var sid string
	var st stored
	if _, err := pgx.ForEachRow(rows, []any{&sid, &st.outcome, &st.reply, &st.takenOver, &st.retold}, func() error {
		inbound[sid] = st
		return nil
	}); err != nil {
		return r, err
	}
	for _, y := range lost {
		st, ok := inbound[y.sid]
		if !ok {
			r.noAnswerNotStored++
			continue
		}
		if st.takenOver {
			r.noAnswerSwept++
		} else if st.retold {
			r.noAnswerRetold++
		}
		if st.outcome == nil {
			continue // counted in unanswered
		}
		k := pair{y.to, y.from}
		if heard[k] || queued[k] {
			continue
		}
		// Stored, never heard over HTTP, and no text from the shop reached the customer
		// or is on its way: a failure, whatever the outcome.
		r.storedUnheard++
		r.unheardByOutcome[*st.outcome]++
		r.unheard = append(r.unheard, fmt.Sprintf("%s (%s, from %s to %s, answered by %s: %v; retold %v)",
			y.sid, *st.outcome, y.from, y.to, y.ans.Base, y.ans.Err, st.retold))
		if *st.outcome == "booked" {
			r.bookedUnheard++
		}
	}
	// The other way round: an answer that did arrive over HTTP but that was texted as
	// well (Twilio's report that it took the answer was never recorded).
	s.mu.Lock()
	for _, y := range s.yeses {
		st, ok := inbound[y.sid]
		if ok && y.ans.Err == nil && st.retold && !st.takenOver && st.outcome != nil && y.ans.Outcome == *st.outcome &&
			others[y.to+"|"+y.from+"|"+st.reply] > 0 {
			r.heardTwice++
		}
	}
	s.mu.Unlock()
	// A YES answered "try again" over HTTP whose answer could not be stored (Postgres
	// was down) is finished later by the sweeper, which texts the real answer.
	s.mu.Lock()
	for _, y := range s.yeses {
		if st, ok := inbound[y.sid]; ok && y.ans.Outcome == "retry_later" && st.outcome != nil && *st.outcome != "retry_later" {
			r.retryThenText[*st.outcome]++
		}
	}
	s.mu.Unlock()

	// Pending bookings: past their hold, the periodic reconciliation heals them; without
	// a link, the booking sweep makes one.
	recon, err := s.jobs(ctx, `kind = 'payments_reconcile' ORDER BY id DESC LIMIT 10`)
	if err != nil {
		return r, err
	}
	for _, j := range recon {
		if s.alive(j) || (j.finalized != nil && time.Since(*j.finalized) < 3*time.Minute) {
			r.reconcileAlive = true
		}
	}
	pending, err := s.pendingBookings(ctx)
	if err != nil {
		return r, err
	}
	r.pending = len(pending)
	if r.sweepAlive, err = s.sweepAlive(ctx); err != nil {
		return r, err
	}
	for _, b := range pending {
		if b.expiresAt == nil || b.expiresAt.Before(time.Now()) {
			r.pendingPastHold++
			if !r.reconcileAlive || b.expiresAt == nil {
				r.pastHoldStuck++
			}
			continue
		}
		if b.linked {
			continue
		}
		r.noLink++
		if !r.sweepAlive {
			r.noLinkNoJob++
		}
	}

	running, err := s.jobs(ctx, `state = 'running'`)
	if err != nil {
		return r, err
	}
	for _, j := range running {
		if s.orphaned(j) {
			r.orphans[j.kind]++
		}
	}
	return r, nil
}

// explain prints, for a bug report, examples behind the figures that are not plain:
// storms fired before their offers were all texted (with their wave jobs), texts
// repeated word for word (with the River jobs that sent texts to that number), and
// answers that never reached their customer.
func (s *soak) explain(ctx context.Context, tw *twiliofake.Server, r report) {
	s.mu.Lock()
	var partial []*storm
	for _, st := range s.storms {
		if st.texted < st.size {
			partial = append(partial, st)
		}
	}
	s.mu.Unlock()
	for _, st := range partial[:min(len(partial), 5)] {
		say("storm %d (%s): %d of %d offers texted when it fired", st.n+1, st.opening, st.texted, st.size)
		rows, err := s.pool.Query(ctx, `SELECT status, count(*) FROM slot_offers WHERE opening_id = $1 GROUP BY 1 ORDER BY 1`, st.opening)
		if err == nil {
			var status string
			var n int
			_, _ = pgx.ForEachRow(rows, []any{&status, &n}, func() error { say("  offers now %s: %d", status, n); return nil })
		}
		s.sayJobs(ctx, `kind = 'offer_wave' AND args->>'opening_id' = $1`, st.opening)
	}
	for _, u := range r.unheard[:min(len(r.unheard), 5)] {
		say("answer never heard: %s", u)
	}
	seen := map[string]int{}
	for _, m := range tw.Messages() {
		if strings.HasSuffix(m.Body, ". Reply YES to book. STOP to opt out") {
			continue
		}
		k := m.From + "|" + m.To + "|" + m.Body
		if seen[k]++; seen[k] == 2 && seen["*"] < 5 {
			seen["*"]++
			say("text repeated: from %s to %s: %.80q", m.From, m.To, m.Body)
			for _, x := range tw.MessagesTo(m.To) {
				say("  %s %s from %s: %.60q", x.DateCreated.Format(time.TimeOnly), x.SID, x.From, x.Body)
			}
			s.sayJobs(ctx, `args->>'to' = $1 OR args->>'booking_id' IN (SELECT b.id::text FROM bookings b
				JOIN customers c ON c.id = b.customer_id WHERE c.phone = $1)`, m.To)
			rows, err := s.pool.Query(ctx, `SELECT message_sid, COALESCE(outcome, '-'), received_at, handled_at, taken_over_at IS NOT NULL
				FROM inbound_messages WHERE from_phone = $1`, m.To)
			if err == nil {
				var sid, outcome string
				var received time.Time
				var handled *time.Time
				var taken bool
				_, _ = pgx.ForEachRow(rows, []any{&sid, &outcome, &received, &handled, &taken}, func() error {
					say("  inbound %s %s received %s handled %v taken over %v", sid, outcome, received.Format(time.TimeOnly), handled, taken)
					return nil
				})
			}
		}
	}
}

func (s *soak) sayJobs(ctx context.Context, where string, args ...any) {
	rows, err := s.pool.Query(ctx, `SELECT id, kind, state::text, attempt, COALESCE(args->>'key', ''), attempted_by, created_at, scheduled_at,
		COALESCE(errors[cardinality(errors)]->>'error', '') FROM river_job WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		say("  jobs: %v", err)
		return
	}
	var id int64
	var kind, state, key, lastErr string
	var attempt int
	var by []string
	var created, scheduled time.Time
	_, _ = pgx.ForEachRow(rows, []any{&id, &kind, &state, &attempt, &key, &by, &created, &scheduled, &lastErr}, func() error {
		dead := ""
		if len(by) > 0 && s.fleet.dead(by[len(by)-1]) {
			dead = " (on a killed process)"
		}
		say("  job %d %s %s attempt %d key %q by %v%s created %s scheduled %s %.100s", id, kind, state, attempt, key, by, dead,
			created.Format(time.TimeOnly), scheduled.Format(time.TimeOnly), lastErr)
		return nil
	})
}
