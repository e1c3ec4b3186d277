package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Waiting in these tests is on events the servers leave behind (a text the Twilio fake
// accepted, a River job's state, a row), polled until a deadline. The deadlines are
// generous: on a 2-core machine running the race-enabled suite next to something else,
// a job that takes milliseconds alone can take seconds. A wait that passes costs only
// the time the work takes; one that fails says what was there (describe), so a timeout
// points at its cause instead of just naming what did not happen.

// Deadlines for the waits, by the work behind them.
const (
	// asyncStep is one step of background work: a River job picked up and run (a text
	// sent, a refund asked of Stripe, a wave of a few customers).
	asyncStep = 60 * time.Second
	// bigWave is a wave texting a few hundred customers.
	bigWave = 3 * time.Minute
)

// pollEvery is how often a wait looks again.
const pollEvery = 50 * time.Millisecond

// until polls cond until it holds. If within passes first, the test fails with what it
// waited for and what the world looked like: the texts the Twilio fake accepted, the
// River jobs, the openings and the bookings.
func (e *env) until(within time.Duration, what string, cond func() bool) {
	e.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			e.t.Fatalf("timed out after %s waiting for %s\n%s", within, what, e.describe())
		}
		time.Sleep(pollEvery)
	}
}

// eventually is until with the default deadline for one step of background work.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	e.until(asyncStep, what, cond)
}

// describe renders what a failed wait needs to be understood. It never fails the test
// itself: a query that errors is reported in the text.
func (e *env) describe() string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var b strings.Builder

	msgs := e.twilio.Messages()
	fmt.Fprintf(&b, "texts the Twilio fake accepted: %d (of %d attempts)\n", len(msgs), e.twilio.Attempts())
	const maxTexts = 40
	first := max(0, len(msgs)-maxTexts)
	if first > 0 {
		fmt.Fprintf(&b, "  ... %d earlier texts left out\n", first)
	}
	for i, m := range msgs[first:] {
		fmt.Fprintf(&b, "  #%d %s to %s: %q\n", first+i+1, m.DateCreated.Format(time.TimeOnly), m.To, clip(m.Body, 140))
	}

	e.describeRows(ctx, &b, "River jobs (newest first; periodic ones only while not completed)", `
		SELECT format('%s %s %s attempt %s/%s%s%s%s', id, kind, state, attempt, max_attempts,
			CASE WHEN state IN ('scheduled', 'retryable') THEN ' due ' || to_char(scheduled_at, 'HH24:MI:SS.MS') ELSE '' END,
			coalesce(' args ' || (args - 'body')::text, ''),
			coalesce(' last error: ' || left(errors[array_length(errors, 1)]->>'error', 300), ''))
		FROM river_job
		WHERE kind NOT IN ('payments_reconcile', 'inbound_sweep', 'openings_complete', 'bookings_sweep', 'retention_purge') OR state <> 'completed'
		ORDER BY id DESC LIMIT 60`)
	e.describeRows(ctx, &b, "openings", `
		SELECT format('%s %s generation %s starts %s', id, status, generation, to_char(starts_at, 'YYYY-MM-DD HH24:MI:SS'))
		FROM slot_openings ORDER BY created_at DESC LIMIT 20`)
	e.describeRows(ctx, &b, "offers by opening, generation and status", `
		SELECT format('%s gen %s %s: %s', opening_id, generation, status, count(*))
		FROM slot_offers GROUP BY opening_id, generation, status ORDER BY opening_id, generation, status LIMIT 40`)
	e.describeRows(ctx, &b, "bookings", `
		SELECT format('%s opening %s customer %s %s session %s intent %s refund %s', b.id, b.opening_id, c.phone, b.status,
			coalesce(b.stripe_checkout_session_id, '-'), coalesce(b.stripe_payment_intent_id, '-'), coalesce(b.refund_id, '-'))
		FROM bookings b JOIN customers c ON c.id = b.customer_id ORDER BY b.created_at DESC LIMIT 30`)
	e.describeRows(ctx, &b, "Stripe events", `
		SELECT format('%s %s %s', event_id, type, coalesce(result, '(no result)'))
		FROM stripe_events ORDER BY received_at DESC LIMIT 20`)
	if e.stripe != nil {
		reqs := e.stripe.Requests()
		fmt.Fprintf(&b, "Stripe requests: %d\n", len(reqs))
		for _, q := range reqs[max(0, len(reqs)-20):] {
			fmt.Fprintf(&b, "  %s %s -> %d key %q\n", q.Method, q.Path, q.Status, q.IdempotencyKey)
		}
	}
	return b.String()
}

// describeRows appends the one-column rows of query under a heading.
func (e *env) describeRows(ctx context.Context, b *strings.Builder, heading, query string) {
	rows, err := e.pool.Query(ctx, query)
	if err != nil {
		fmt.Fprintf(b, "%s: query failed: %v\n", heading, err)
		return
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			fmt.Fprintf(b, "%s: scan failed: %v\n", heading, err)
			return
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		fmt.Fprintf(b, "%s: %v\n", heading, err)
		return
	}
	fmt.Fprintf(b, "%s: %d shown\n", heading, len(lines))
	for _, l := range lines {
		fmt.Fprintf(b, "  %s\n", l)
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
