package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"   // attempts left (or the first still to come)
	DeliverySucceeded = "succeeded" // an attempt got a 2xx
	DeliveryFailed    = "failed"    // every scheduled attempt failed, or the endpoint was disabled
)

// maxAnswer is how much of an endpoint's answer is read; the rest is dropped with the
// connection, so a huge answer costs nothing more.
const maxAnswer = 64 << 10

// maxHead is how much of the answer each attempt keeps for the owner.
const maxHead = 1024

// erasedAnswer replaces an attempt's error once the customer its event named is erased:
// the error may quote the answer (a malformed one), which may echo the body. The same
// words as the erasure's SQL (WebhookAttemptsForgetEvents).
const erasedAnswer = "not kept: the customer was erased"

// EventID is the id an event has in its body and in the webhook-id header (the same on
// every attempt, so receivers can drop a redelivery).
func EventID(id uuid.UUID) string {
	return "evt_" + strings.ReplaceAll(id.String(), "-", "")
}

// ParseEventID reads an id EventID wrote.
func ParseEventID(s string) (uuid.UUID, bool) {
	hexID, ok := strings.CutPrefix(s, "evt_")
	if !ok || len(hexID) != 32 {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(hexID)
	return id, err == nil
}

// DeliveryWorker runs jobs.WebhookDelivery.
type DeliveryWorker struct {
	river.WorkerDefaults[jobs.WebhookDelivery]
	Service *Service
}

// Timeout implements river.Worker: one attempt, and recording it, with room to spare.
// River's rescuer waits for it before it retries a job whose process died.
func (w *DeliveryWorker) Timeout(*river.Job[jobs.WebhookDelivery]) time.Duration {
	return 2*w.Service.cfg.Timeout + 5*time.Second
}

// Work implements river.Worker.
func (w *DeliveryWorker) Work(ctx context.Context, job *river.Job[jobs.WebhookDelivery]) error {
	err := w.Service.Attempt(ctx, job.Args.DeliveryID, job.Args.Manual)
	if errors.Is(err, ErrEndpointBusy) {
		return river.JobSnooze(w.Service.busyWait(job.Metadata))
	}
	return err
}

// busyWait is how long a job that found its endpoint busy waits: BusyWait, doubling with
// each time the job has waited (up to a minute), give or take a quarter so that a backlog
// spreads out. A slow endpoint with a thousand deliveries queued then costs a few
// re-fetches a second, not thousands.
func (s *Service) busyWait(metadata []byte) time.Duration {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(metadata, &m) // no metadata: the first wait
	d := min(s.cfg.BusyWait<<min(max(m.Snoozes, 0), 6), time.Minute)
	return d*3/4 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// ErrEndpointBusy is Attempt's answer when the delivery's endpoint already has
// PerEndpoint attempts in flight, or its shop PerShop, on all the instances together:
// nothing was done; try again later (DeliveryWorker snoozes the job).
var ErrEndpointBusy = errors.New("hooks: endpoint busy")

// Attempt makes one attempt at delivering: scheduled (manual false) only while the
// delivery is pending, an owner's "send again" (manual true) whatever its status. It
// returns river.JobSnooze until the next scheduled attempt after a failure (which River
// does not count as one of its attempts), ErrEndpointBusy when the endpoint or its shop
// already has as many attempts in flight as it may (PerEndpoint, PerShop), and another
// error when the attempt could not be made or recorded (River retries it).
func (s *Service) Attempt(ctx context.Context, deliveryID uuid.UUID, manual bool) error {
	d, err := queries.WebhookDeliveryForAttempt(ctx, s.pool, deliveryID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // deleted with its endpoint, or purged
	}
	if err != nil {
		return fmt.Errorf("read delivery %s: %w", deliveryID, err)
	}
	if !manual && d.Status != DeliveryPending {
		return nil // done by a manual attempt meanwhile, or failed for good
	}
	if d.DisabledAt != nil || d.Payload == nil {
		reason := "not sent: the endpoint is disabled"
		if d.Payload == nil {
			reason = "not sent: the event's customer was erased"
		}
		if !manual {
			if err := queries.WebhookDeliveryFail(ctx, s.pool, db.WebhookDeliveryFailParams{
				ID: deliveryID, Reason: pgtype.Text{String: reason, Valid: true}, Now: s.cfg.Now().UTC(),
			}); err != nil {
				return fmt.Errorf("fail delivery %s: %w", deliveryID, err)
			}
		}
		return nil
	}
	// A permit of the shop and of the endpoint, counted in Postgres across the instances:
	// a shop whose receivers hang holds at most PerShop of the queue's workers anywhere,
	// so it cannot starve another shop's deliveries (permits.go).
	release, ok, err := s.permits.take(ctx, d.ShopID, d.EndpointID, s.cfg.PerShop, s.cfg.PerEndpoint)
	if err != nil {
		return fmt.Errorf("delivery %s: %w", deliveryID, err)
	}
	if !ok {
		return ErrEndpointBusy
	}
	defer release()
	res := s.send(ctx, d)
	if ctx.Err() != nil {
		// This instance is stopping (or the job ran out of time): not the endpoint's
		// failure. River runs the job again; the attempt is not counted.
		return fmt.Errorf("delivery %s interrupted: %w", deliveryID, ctx.Err())
	}
	next, err := s.record(context.WithoutCancel(ctx), d, manual, res)
	if err != nil {
		return err
	}
	switch {
	case res.ok():
		s.cfg.Metrics.WebhookAttempt(metrics.WebhookSucceeded)
	case res.refused:
		s.cfg.Metrics.WebhookAttempt(metrics.WebhookRefused)
	default:
		s.cfg.Metrics.WebhookAttempt(metrics.WebhookFailed)
	}
	if next > 0 {
		return river.JobSnooze(next)
	}
	return nil
}

// result is what one attempt got.
type result struct {
	at       time.Time
	status   int // 0: no answer
	duration time.Duration
	head     string
	err      string
	// refused: the attempt was not made because the URL or the address it resolved to
	// is not allowed.
	refused bool
}

func (r result) ok() bool { return r.err == "" && r.status >= 200 && r.status < 300 }

// Sign returns the webhook-signature header for a message: "v1,<signature>" for each
// secret, space-separated (Standard Webhooks), made by the Standard Webhooks library.
func Sign(msgID string, at time.Time, body []byte, secrets ...string) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return "", fmt.Errorf("hooks: bad secret: %w", err)
		}
		sig, err := wh.Sign(msgID, at, body)
		if err != nil {
			return "", fmt.Errorf("hooks: sign: %w", err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// signingSecrets are the secrets that sign at now: the endpoint's, and the one it
// replaced while that still overlaps, opened.
func (s *Service) signingSecrets(d db.WebhookDeliveryForAttemptRow, now time.Time) ([]string, error) {
	secret, err := s.open(d.ShopID, d.Secret)
	if err != nil {
		return nil, err
	}
	out := []string{secret}
	if d.PreviousSecret.Valid && d.PreviousSecretExpiresAt != nil && now.Before(*d.PreviousSecretExpiresAt) {
		previous, err := s.open(d.ShopID, d.PreviousSecret.String)
		if err != nil {
			return nil, err
		}
		out = append(out, previous)
	}
	return out, nil
}

// send makes the request: the stored body, signed now, POSTed to the endpoint.
func (s *Service) send(ctx context.Context, d db.WebhookDeliveryForAttemptRow) result {
	now := s.cfg.Now()
	res := result{at: now}
	u, err := url.Parse(d.Url)
	if err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && s.cfg.DevMode)) {
		res.err, res.refused = "not sent: the URL must use https", true
		return res
	}
	msgID := EventID(d.EventID)
	secrets, err := s.signingSecrets(d, now)
	if err != nil {
		res.err = "not sent: " + err.Error()
		return res
	}
	sig, err := Sign(msgID, now, d.Payload, secrets...)
	if err != nil {
		res.err = "not sent: " + err.Error()
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Url, bytes.NewReader(d.Payload))
	if err != nil {
		res.err = "not sent: the URL cannot be requested"
		return res
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", s.cfg.UserAgent)
	h.Set(standardwebhooks.HeaderWebhookID, msgID)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	// The same on every attempt, as webhook-id is: receivers may dedupe on it, and Go's
	// Transport resends a POST that carries it when the kept-alive connection it was
	// written on turns out closed by the receiver (without it, a POST is never resent).
	h.Set("Idempotency-Key", msgID)
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		res.duration = time.Since(start)
		res.err = s.describe(err)
		var blocked *BlockedError
		if res.refused = errors.As(err, &blocked); res.refused {
			// The shop reads Unreachable; the operator, what kind of address it was.
			s.log.InfoContext(ctx, "webhook attempt refused: the host resolves to a blocked address",
				"endpoint_id", d.EndpointID, "kind", blocked.Reason)
		}
		return res
	}
	answer, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_ = resp.Body.Close()
	res.duration = time.Since(start)
	res.status = resp.StatusCode
	res.head = head(answer)
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.err = fmt.Sprintf("answered %d (a redirect, which is not followed): make the URL the final one", resp.StatusCode)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		// The status is the answer; a body cut short by the timeout does not undo it.
	case rerr != nil && !errors.Is(rerr, io.EOF):
		res.err = "answered " + strconv.Itoa(resp.StatusCode) + ", then: " + s.describe(rerr)
	default:
		res.err = "answered " + strconv.Itoa(resp.StatusCode)
	}
	return res
}

// describe says, for the owner, why a request failed: without the URL (its query may
// hold a token), without Go's wrapping, and without any address: a failure to connect
// (a name that does not resolve, an address blocked, refused or unreachable) is one
// wording (Unreachable), and a connection that failed later names the failure only
// ("connection reset by peer"), not the addresses of its two ends.
func (s *Service) describe(err error) string {
	var blocked *BlockedError
	var dns *net.DNSError
	var op *net.OpError
	var ne net.Error
	switch {
	case errors.As(err, &blocked), errors.As(err, &dns):
		return Unreachable
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("no answer within %s", s.cfg.Timeout)
	case errors.As(err, &op):
		if op.Op == "dial" {
			return Unreachable
		}
		err = op.Err
		var sys *os.SyscallError
		if errors.As(err, &sys) {
			err = sys.Err
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return truncate(strings.ToValidUTF8(err.Error(), "?"), 300)
}

// head is the first bytes of an answer, as text Postgres can store.
func head(b []byte) string {
	if len(b) > maxHead {
		b = b[:maxHead]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// record logs the attempt and moves the delivery and its endpoint on, in one
// transaction; next is how long until the next scheduled attempt (0: none).
func (s *Service) record(ctx context.Context, d db.WebhookDeliveryForAttemptRow, manual bool, res result) (next time.Duration, err error) {
	now := res.at.UTC()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := queries.WebhookDeliveryLock(ctx, tx, d.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // deleted with its endpoint meanwhile
		}
		if err != nil {
			return fmt.Errorf("lock delivery %s: %w", d.ID, err)
		}
		// The customer the event names may have been erased while the request was out:
		// then the answer, which may echo the body, is not kept. Asked after the lock, in
		// a statement of its own, so that it sees an erasure that took the lock first
		// (one that comes after scrubs this attempt itself: ForgetCustomer).
		forgotten, err := queries.WebhookEventForgotten(ctx, tx, d.EventID)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read event of delivery %s: %w", d.ID, err)
		}
		if forgotten {
			res.head = ""
			if res.err != "" {
				res.err = erasedAnswer
			}
		}
		a := db.WebhookAttemptInsertParams{
			DeliveryID: d.ID, AttemptedAt: now, Manual: manual, DurationMs: int32(min(res.duration.Milliseconds(), 1<<30)),
			ResponseHead: res.head, StatusCode: pgtype.Int4{Int32: int32(res.status), Valid: res.status != 0},
			Error: pgtype.Text{String: res.err, Valid: res.err != ""},
		}
		if err := queries.WebhookAttemptInsert(ctx, tx, a); err != nil {
			return fmt.Errorf("log attempt of delivery %s: %w", d.ID, err)
		}
		u := db.WebhookDeliveryRecordResultParams{
			ID: d.ID, Status: row.Status, Attempts: row.Attempts, NextAttemptAt: row.NextAttemptAt, AttemptedAt: now,
			LastStatusCode: a.StatusCode, LastError: a.Error, FinishedAt: row.FinishedAt,
		}
		switch {
		case res.ok():
			u.Status, u.NextAttemptAt, u.FinishedAt = DeliverySucceeded, nil, &now
			if !manual {
				u.Attempts++
			}
		case !manual && row.Status == DeliveryPending:
			u.Attempts++
			if int(u.Attempts) >= len(s.cfg.Schedule) {
				u.Status, u.NextAttemptAt, u.FinishedAt = DeliveryFailed, nil, &now
			} else {
				next = max(s.cfg.Schedule[u.Attempts], time.Millisecond)
				t := now.Add(next)
				u.NextAttemptAt = &t
			}
		}
		if err := queries.WebhookDeliveryRecordResult(ctx, tx, u); err != nil {
			return fmt.Errorf("record delivery %s: %w", d.ID, err)
		}
		if res.ok() {
			if err := queries.WebhookEndpointRecordSuccess(ctx, tx, d.EndpointID); err != nil {
				return fmt.Errorf("record endpoint %s success: %w", d.EndpointID, err)
			}
			return nil
		}
		f, err := queries.WebhookEndpointRecordFailure(ctx, tx, db.WebhookEndpointRecordFailureParams{
			ID: d.EndpointID, Now: now, DisableBefore: now.Add(-s.cfg.DisableAfter),
			Reason: fmt.Sprintf("disabled automatically: every attempt failed for %s (the last: %s); fix the endpoint, then enable it",
				days(s.cfg.DisableAfter), truncate(res.err, 200)),
		})
		if err != nil {
			return fmt.Errorf("record endpoint %s failure: %w", d.EndpointID, err)
		}
		if f.DisabledNow {
			s.log.WarnContext(ctx, "webhook endpoint disabled after failing", "endpoint_id", d.EndpointID,
				"shop_id", d.ShopID, "failing_since", f.FailingSince)
		}
		return nil
	})
	return next, err
}

// days writes a duration of whole days as "5 days".
func days(d time.Duration) string {
	if n := int(d / (24 * time.Hour)); n >= 1 && d%(24*time.Hour) == 0 {
		if n == 1 {
			return "1 day"
		}
		return strconv.Itoa(n) + " days"
	}
	return d.String()
}
