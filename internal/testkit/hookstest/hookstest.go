// Package hookstest gives tests a real HTTP receiver of outbound webhook events, which
// verifies every request with the Standard Webhooks library as an integrator's would,
// and runs the delivery side (the dispatcher and a River client working the webhooks
// queue) against a test's database. The end-to-end story tests (declare, wave, YES, pay,
// refund, cancel → the events in order) build on it.
package hookstest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// Event is one event a receiver accepted (answered 2xx), decoded.
type Event struct {
	// ID is the webhook-id header, which equals the body's id.
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	// Body and Header are the request as it came.
	Body   []byte      `json:"-"`
	Header http.Header `json:"-"`
}

// Receiver is an endpoint: a local HTTP server that verifies each request's signature
// with the secrets it is given (SetSecrets) and answers as it is told (Answer, Hold).
// Requests that do not verify are answered 400 and kept apart (Unverified).
type Receiver struct {
	t   testing.TB
	srv *httptest.Server

	mu              sync.Mutex
	secrets         []string
	ignoreTimestamp bool
	status          int
	hold            chan struct{} // while non-nil, requests wait on it
	started         chan struct{} // signalled (non-blocking) as each request arrives
	accepted        []Event
	requests        int
	unverified      []string
	changed         chan struct{} // closed and replaced whenever accepted grows
}

// NewReceiver starts a receiver answering 204, closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{t: t, status: http.StatusNoContent, changed: make(chan struct{}), started: make(chan struct{}, 1000)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.Release()
		r.srv.Close()
	})
	return r
}

// URL is where the receiver listens (http://127.0.0.1:port/hooks): an endpoint needs
// AllowPrivate and DevMode to reach it.
func (r *Receiver) URL() string { return r.srv.URL + "/hooks" }

// SetSecrets sets the secrets a request may verify with (any one of them).
func (r *Receiver) SetSecrets(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = slices.Clone(secrets)
}

// IgnoreTimestamp verifies signatures without the library's 5-minute tolerance (for
// services on an injected clock).
func (r *Receiver) IgnoreTimestamp() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ignoreTimestamp = true
}

// Answer makes the receiver answer status from now on (a 5xx: down; 204: up again).
func (r *Receiver) Answer(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

// Hold makes requests wait (a receiver that hangs) until Release.
func (r *Receiver) Hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold == nil {
		r.hold = make(chan struct{})
	}
}

// Release lets held requests go on.
func (r *Receiver) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
}

// Started is signalled as each request arrives (before it is held or answered).
func (r *Receiver) Started() <-chan struct{} { return r.started }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	select {
	case r.started <- struct{}{}:
	default:
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	hold, secrets, ignoreTS, status := r.hold, r.secrets, r.ignoreTimestamp, r.status
	r.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-req.Context().Done():
			return
		}
	}
	if err := verify(body, req.Header, secrets, ignoreTS); err != nil {
		r.mu.Lock()
		r.unverified = append(r.unverified, fmt.Sprintf("%s: %v", req.Header.Get(standardwebhooks.HeaderWebhookID), err))
		r.mu.Unlock()
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	if status < 200 || status > 299 {
		http.Error(w, "down", status)
		return
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != req.Header.Get(standardwebhooks.HeaderWebhookID) {
		r.mu.Lock()
		r.unverified = append(r.unverified, fmt.Sprintf("body %q does not carry the webhook-id %q", body, req.Header.Get(standardwebhooks.HeaderWebhookID)))
		r.mu.Unlock()
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	ev.Body, ev.Header = body, req.Header.Clone()
	r.mu.Lock()
	r.accepted = append(r.accepted, ev)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(status)
}

// verify checks a request with the Standard Webhooks library: one of the secrets must
// match one of the header's signatures.
func verify(body []byte, h http.Header, secrets []string, ignoreTimestamp bool) error {
	if len(secrets) == 0 {
		return fmt.Errorf("the receiver has no secret to verify with")
	}
	var last error
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			return err
		}
		if ignoreTimestamp {
			err = wh.VerifyIgnoringTimestamp(body, h)
		} else {
			err = wh.Verify(body, h)
		}
		if err == nil {
			return nil
		}
		last = err
	}
	return last
}

// Accepted returns the events answered 2xx so far, in the order they arrived.
func (r *Receiver) Accepted() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.accepted)
}

// Requests counts every request, whatever the answer.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Unverified describes the requests whose signature or body did not verify.
func (r *Receiver) Unverified() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.unverified)
}

// WaitFor waits until n events were accepted and returns them; it fails the test, saying
// what arrived, if that takes longer than timeout.
func (r *Receiver) WaitFor(t testing.TB, n int, timeout time.Duration) []Event {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		got, changed := slices.Clone(r.accepted), r.changed
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("hookstest: %d of %d events accepted after %s (%d requests; types %v; unverified %v)",
				len(got), n, timeout, r.Requests(), Types(got), r.Unverified())
		}
	}
}

// Types lists the events' types in order.
func Types(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// IDs lists the events' ids in order.
func IDs(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

// InRecordedOrder returns events sorted as they were recorded (webhook_events.seq, the
// outbox's order): deliveries run concurrently, so they may arrive in another order, and
// two events of one statement (opening.filled and booking.confirmed) share created_at.
// An event pool does not hold fails the test.
func InRecordedOrder(t testing.TB, pool *pgxpool.Pool, events []Event) []Event {
	t.Helper()
	seq := map[string]int64{}
	for _, e := range events {
		id, ok := hooks.ParseEventID(e.ID)
		if !ok {
			t.Fatalf("hookstest: event id %q is not one hooks makes", e.ID)
		}
		var n int64
		if err := pool.QueryRow(context.Background(), `SELECT seq FROM webhook_events WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatalf("hookstest: event %s: %v", e.ID, err)
		}
		seq[e.ID] = n
	}
	out := slices.Clone(events)
	slices.SortStableFunc(out, func(a, b Event) int { return cmp.Compare(seq[a.ID], seq[b.ID]) })
	return out
}

// RiverConfig tunes the River client Deliver starts.
type RiverConfig struct {
	// Workers is the webhooks queue's MaxWorkers; default 10.
	Workers int
	// RescueStuckJobsAfter and JobTimeout are River's; 0 leaves River's defaults.
	RescueStuckJobsAfter, JobTimeout time.Duration
}

// Deliver runs the delivery side for svc until the test ends: svc's dispatcher and a
// River client working jobs.WebhookDelivery on pool. The client is returned (it may also
// enqueue other jobs).
func Deliver(t testing.TB, pool *pgxpool.Pool, svc *hooks.Service, cfg RiverConfig) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &hooks.DeliveryWorker{Service: svc})
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:               map[string]river.QueueConfig{jobs.QueueWebhooks: {MaxWorkers: cmp.Or(cfg.Workers, 10)}},
		Workers:              workers,
		FetchCooldown:        10 * time.Millisecond,
		FetchPollInterval:    20 * time.Millisecond,
		RescueStuckJobsAfter: cfg.RescueStuckJobsAfter,
		JobTimeout:           cfg.JobTimeout,
		TestOnly:             true,
	})
	if err != nil {
		t.Fatalf("hookstest: river client: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := rc.Start(ctx); err != nil {
		t.Fatalf("hookstest: start river: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.RunDispatcher(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = rc.StopAndCancel(sctx)
	})
	return rc
}
