package hooks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/problem"
)

// Delivery is one event's delivery to one endpoint, as the owner sees it.
type Delivery struct {
	ID             uuid.UUID
	EventID        uuid.UUID
	EventType      string
	EventCreatedAt time.Time
	Status         string
	// Attempts counts the scheduled attempts made (not the owner's "send again").
	Attempts       int
	NextAttemptAt  *time.Time
	LastAttemptAt  *time.Time
	LastStatusCode *int
	LastError      string
	CreatedAt      time.Time
	FinishedAt     *time.Time
}

// DeliveryDetail is a delivery with the body it sends and every attempt so far.
type DeliveryDetail struct {
	Delivery
	Payload  []byte
	Attempts []Attempt
}

// Attempt is one request made for a delivery, and what came of it.
type Attempt struct {
	At time.Time
	// Manual marks an owner's "send again".
	Manual     bool
	StatusCode *int
	Duration   time.Duration
	// ResponseHead is the first bytes of the answer.
	ResponseHead string
	Error        string
}

// DeliveryQuery selects a page of an endpoint's deliveries, newest first.
type DeliveryQuery struct {
	// Status is "" (all) or a delivery status.
	Status string
	// Limit is 1 to MaxDeliveryPage; 0 means DefaultDeliveryPage.
	Limit int
	// Cursor is the previous page's Next; "" starts with the newest.
	Cursor string
}

// Page sizes of the delivery list.
const (
	DefaultDeliveryPage = 50
	MaxDeliveryPage     = 200
)

// DeliveryPage is one page of deliveries; Next is "" on the last.
type DeliveryPage struct {
	Deliveries []Delivery
	Next       string
}

// Deliveries lists the deliveries to shopID's endpoint, newest first.
func (s *Service) Deliveries(ctx context.Context, shopID, endpointID uuid.UUID, q DeliveryQuery) (DeliveryPage, error) {
	if _, err := s.Endpoint(ctx, shopID, endpointID); err != nil {
		return DeliveryPage{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultDeliveryPage
	}
	if limit < 1 || limit > MaxDeliveryPage {
		return DeliveryPage{}, problem.Invalidf("limit", "limit must be a whole number from 1 to %d", MaxDeliveryPage)
	}
	switch q.Status {
	case "", DeliveryPending, DeliverySucceeded, DeliveryFailed:
	default:
		return DeliveryPage{}, problem.Invalidf("status", "status must be pending, succeeded or failed")
	}
	before, err := decodeCursor(q.Cursor)
	if err != nil {
		return DeliveryPage{}, err
	}
	rows, err := queries.WebhookDeliveryList(ctx, s.pool, db.WebhookDeliveryListParams{
		EndpointID: endpointID, ShopID: shopID, Status: q.Status, BeforeSeq: before, MaxRows: int32(limit + 1),
	})
	if err != nil {
		return DeliveryPage{}, fmt.Errorf("list deliveries: %w", err)
	}
	var page DeliveryPage
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		page.Next = encodeCursor(last.Seq.Int64)
	}
	page.Deliveries = make([]Delivery, len(rows))
	for i, r := range rows {
		page.Deliveries[i] = deliveryFromRow(db.WebhookDeliveryGetRow{
			ID: r.ID, EventID: r.EventID, EventType: r.EventType, EventCreatedAt: r.EventCreatedAt, Status: r.Status,
			Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt, LastAttemptAt: r.LastAttemptAt,
			LastStatusCode: r.LastStatusCode, LastError: r.LastError, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt,
		})
	}
	return page, nil
}

func deliveryFromRow(r db.WebhookDeliveryGetRow) Delivery {
	d := Delivery{
		ID: r.ID, EventID: r.EventID, EventType: r.EventType, EventCreatedAt: r.EventCreatedAt, Status: r.Status,
		Attempts: int(r.Attempts), NextAttemptAt: r.NextAttemptAt, LastAttemptAt: r.LastAttemptAt,
		LastError: r.LastError.String, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt,
	}
	if r.LastStatusCode.Valid {
		c := int(r.LastStatusCode.Int32)
		d.LastStatusCode = &c
	}
	return d
}

// Delivery returns one delivery to shopID's endpoint with its body and attempts.
func (s *Service) Delivery(ctx context.Context, shopID, endpointID, deliveryID uuid.UUID) (DeliveryDetail, error) {
	r, err := queries.WebhookDeliveryGet(ctx, s.pool, db.WebhookDeliveryGetParams{ID: deliveryID, EndpointID: endpointID, ShopID: shopID})
	if errors.Is(err, pgx.ErrNoRows) {
		if _, eerr := s.Endpoint(ctx, shopID, endpointID); eerr != nil {
			return DeliveryDetail{}, eerr
		}
		return DeliveryDetail{}, ErrDeliveryNotFound
	}
	if err != nil {
		return DeliveryDetail{}, fmt.Errorf("get delivery %s: %w", deliveryID, err)
	}
	rows, err := queries.WebhookAttemptList(ctx, s.pool, deliveryID)
	if err != nil {
		return DeliveryDetail{}, fmt.Errorf("list attempts of delivery %s: %w", deliveryID, err)
	}
	out := DeliveryDetail{Delivery: deliveryFromRow(r), Payload: r.Payload, Attempts: make([]Attempt, len(rows))}
	for i, a := range rows {
		out.Attempts[i] = Attempt{At: a.AttemptedAt, Manual: a.Manual, Duration: time.Duration(a.DurationMs) * time.Millisecond,
			ResponseHead: a.ResponseHead, Error: a.Error.String}
		if a.StatusCode.Valid {
			c := int(a.StatusCode.Int32)
			out.Attempts[i].StatusCode = &c
		}
	}
	return out, nil
}

// errErased refuses to send again an event whose customer was erased.
var errErased = &problem.Error{Kind: problem.Conflict, Code: "webhook_event_erased",
	Message: "this event named a customer who was erased since; it cannot be sent again"}

// ErrResendsLimited refuses a "send again" while MaxResends of the shop's are waiting or
// in flight: one shop's resends cannot flood the delivery queue.
var ErrResendsLimited = &problem.Error{Kind: problem.Conflict, Code: "webhook_resends_limited",
	Message: "too many deliveries of this shop are waiting to be sent again; try again once they are sent"}

// waitingResendsSQL counts a shop's "send again" jobs waiting or running: those of
// other deliveries, and this delivery's. It reads River's table directly (sqlc does not
// see River's schema); the arguments are this package's (jobs.WebhookDelivery), found by
// River's index on them.
const waitingResendsSQL = `
SELECT count(*) FILTER (WHERE args->>'delivery_id' <> $2), count(*) FILTER (WHERE args->>'delivery_id' = $2)
FROM river_job
WHERE kind = 'webhook_delivery' AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
  AND args @> jsonb_build_object('manual', true, 'shop_id', $1::text)`

// Resend queues one more attempt at a delivery ("send again"), outside its schedule and
// whatever its status: the body and webhook-id are the first attempt's, signed anew. A
// shop has at most MaxResends waiting or in flight: past it, ErrResendsLimited.
func (s *Service) Resend(ctx context.Context, shopID, endpointID, deliveryID uuid.UUID) (Delivery, error) {
	ep, err := s.Endpoint(ctx, shopID, endpointID)
	if err != nil {
		return Delivery{}, err
	}
	if ep.Disabled() {
		return Delivery{}, ErrEndpointDisabled
	}
	var out Delivery
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		r, err := queries.WebhookDeliveryGet(ctx, tx, db.WebhookDeliveryGetParams{ID: deliveryID, EndpointID: endpointID, ShopID: shopID})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrDeliveryNotFound
		}
		if err != nil {
			return fmt.Errorf("get delivery %s: %w", deliveryID, err)
		}
		if r.Payload == nil {
			return errErased
		}
		if err := queries.WebhookResendLockShop(ctx, tx, shopID); err != nil {
			return fmt.Errorf("lock shop's resends: %w", err)
		}
		var others, this int
		if err := tx.QueryRow(ctx, waitingResendsSQL, shopID.String(), deliveryID.String()).Scan(&others, &this); err != nil {
			return fmt.Errorf("count shop's resends: %w", err)
		}
		// One already waiting for this delivery stands for this one too (the job is
		// unique while it waits); a new one must fit under the shop's cap.
		if this == 0 && others >= s.cfg.MaxResends {
			return ErrResendsLimited
		}
		if _, err := s.queue.InsertTx(ctx, tx, jobs.WebhookDelivery{DeliveryID: deliveryID, Manual: true, ShopID: shopID}, nil); err != nil {
			return fmt.Errorf("enqueue resend of delivery %s: %w", deliveryID, err)
		}
		out = deliveryFromRow(r)
		return nil
	})
	return out, err
}

// The cursor is opaque to clients: base64 of "d<seq>" of the page's last row.
func encodeCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("d" + strconv.FormatInt(seq, 10)))
}

var errBadCursor = problem.Invalidf("cursor", "cursor is not one this server gave out; start again without it")

// decodeCursor reads a cursor; "" is the start (newest first: before every row).
func decodeCursor(c string) (int64, error) {
	if c == "" {
		return math.MaxInt64, nil
	}
	if len(c) > 100 {
		return 0, errBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, errBadCursor
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(string(b), "d"), 10, 64)
	if err != nil || !strings.HasPrefix(string(b), "d") {
		return 0, errBadCursor
	}
	return n, nil
}
