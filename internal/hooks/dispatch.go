package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// dispatchBatch is how many events one dispatch transaction takes.
const dispatchBatch = 100

// envelope is an event's body.
type envelope struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	// Timestamp is CreatedAt again, under the name the Standard Webhooks payload
	// structure uses.
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// Dispatch fans out up to a batch of recorded events, oldest first, in one transaction:
// each event's body is rendered once and stored, one delivery is made for each of the
// shop's enabled endpoints subscribed to it, and one River job for each delivery (an
// event past its shop's MaxEventsPerHour gets failed deliveries and no job). Events
// another instance is dispatching are skipped (SKIP LOCKED); a dispatcher that dies
// mid-batch leaves its events to the next. It returns how many events it took.
func (s *Service) Dispatch(ctx context.Context) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		events, err := queries.WebhookEventsToDispatch(ctx, tx, dispatchBatch)
		if err != nil {
			return fmt.Errorf("read events to dispatch: %w", err)
		}
		n = len(events)
		now := s.cfg.Now().UTC()
		// The oldest waiting event's age is the backlog's measure, read from this very
		// batch (oldest first): it costs nothing more.
		var lag time.Duration
		if n > 0 {
			lag = now.Sub(events[0].CreatedAt)
		}
		s.cfg.Metrics.WebhookDispatchLag(lag)
		var deliveries []river.InsertManyParams
		// Per shop and budget in the batch: its events sent in the hour before its first
		// one here, and in the batch so far (MaxEventsPerHour; MaxMessageEventsPerHour for
		// message.received).
		sent := map[budget]int{}
		for _, ev := range events {
			body, rerr := s.render(ev)
			if rerr != nil {
				// Data that cannot be sent is a bug, not a passing failure: it would
				// fail the same way on every retry. It is kept, with why, and sent
				// to no one.
				s.log.ErrorContext(ctx, "webhook event not rendered", "event_id", ev.ID, "type", ev.Type, "error", rerr)
				if err := queries.WebhookEventMarkDispatched(ctx, tx, db.WebhookEventMarkDispatchedParams{
					ID: ev.ID, Now: now, DispatchError: pgtype.Text{String: truncate(rerr.Error(), 500), Valid: true},
				}); err != nil {
					return fmt.Errorf("mark event %s: %w", ev.ID, err)
				}
				continue
			}
			key := budget{shop: ev.ShopID, messages: ev.Type == MessageReceived}
			limit := s.limit(key.messages)
			n, counted := sent[key]
			if !counted {
				c, err := queries.WebhookEventsSentSince(ctx, tx, db.WebhookEventsSentSinceParams{
					ShopID: ev.ShopID, Since: ev.CreatedAt.Add(-time.Hour), BeforeSeq: ev.Seq.Int64, MaxRows: int32(limit),
					Messages: key.messages,
				})
				if err != nil {
					return fmt.Errorf("count shop %s's events: %w", ev.ShopID, err)
				}
				n = int(c)
			}
			if n >= limit {
				// Past the shop's limit: recorded and rendered (the owner may send it
				// again), but not sent, so that a shop's flood of events cannot fill the
				// queue the other shops' deliveries wait in.
				if err := s.holdBack(ctx, tx, ev, body, limit, now); err != nil {
					return err
				}
				continue
			}
			sent[key] = n + 1
			ids, err := queries.WebhookDeliveriesCreate(ctx, tx, db.WebhookDeliveriesCreateParams{
				EventID: ev.ID, ShopID: ev.ShopID, Type: ev.Type, Now: now,
			})
			if err != nil {
				return fmt.Errorf("create deliveries of event %s: %w", ev.ID, err)
			}
			for _, id := range ids {
				deliveries = append(deliveries, river.InsertManyParams{Args: jobs.WebhookDelivery{DeliveryID: id}})
			}
			if err := queries.WebhookEventMarkDispatched(ctx, tx, db.WebhookEventMarkDispatchedParams{
				ID: ev.ID, Now: now, Payload: body,
			}); err != nil {
				return fmt.Errorf("mark event %s: %w", ev.ID, err)
			}
		}
		if len(deliveries) > 0 {
			if _, err := s.queue.InsertManyTx(ctx, tx, deliveries); err != nil {
				return fmt.Errorf("enqueue deliveries: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// budget is one of a shop's two hourly budgets of events sent: message.received, or
// every other type.
type budget struct {
	shop     uuid.UUID
	messages bool
}

// limit is the hourly budget of a shop's message.received events (messages), or of its
// other events.
func (s *Service) limit(messages bool) int {
	if messages {
		return s.cfg.MaxMessageEventsPerHour
	}
	return s.cfg.MaxEventsPerHour
}

// holdBack fans out an event past its shop's hourly limit: its deliveries are made
// failed, saying why, and it is marked dispatched with the same reason (so that it does
// not count as sent).
func (s *Service) holdBack(ctx context.Context, tx pgx.Tx, ev db.WebhookEventsToDispatchRow, body []byte, limit int, now time.Time) error {
	what := "events"
	if ev.Type == MessageReceived {
		what = MessageReceived + " events"
	}
	reason := fmt.Sprintf("not sent: more than %d %s of the shop in an hour (the limit); send it again if it is needed",
		limit, what)
	if _, err := queries.WebhookDeliveriesCreateUnsent(ctx, tx, db.WebhookDeliveriesCreateUnsentParams{
		EventID: ev.ID, ShopID: ev.ShopID, Type: ev.Type, Now: now, Reason: reason,
	}); err != nil {
		return fmt.Errorf("create held-back deliveries of event %s: %w", ev.ID, err)
	}
	if err := queries.WebhookEventMarkDispatched(ctx, tx, db.WebhookEventMarkDispatchedParams{
		ID: ev.ID, Now: now, Payload: body, DispatchError: pgtype.Text{String: reason, Valid: true},
	}); err != nil {
		return fmt.Errorf("mark event %s: %w", ev.ID, err)
	}
	return nil
}

// render makes an event's body: the envelope around its data, as it was rendered when
// the event was recorded (or, for an event recorded before 0050, as legacyData renders
// its subject).
func (s *Service) render(ev db.WebhookEventsToDispatchRow) ([]byte, error) {
	var data any = json.RawMessage(ev.Subject)
	if !ev.Rendered {
		var err error
		if data, err = legacyData(ev.Type, ev.Subject); err != nil {
			return nil, err
		}
	}
	at := ev.CreatedAt.UTC()
	b, err := json.Marshal(envelope{ID: EventID(ev.ID), Type: ev.Type, CreatedAt: at, Timestamp: at, Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return b, nil
}

// RunDispatcher dispatches events until ctx ends: every PollEvery, and again at once
// while batches come full. Run it on every instance (they share the work); a failed
// dispatch (Postgres away) is logged and tried again at the next tick.
func (s *Service) RunDispatcher(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "webhook dispatch failed", "error", err)
		}
		if n == dispatchBatch {
			t.Reset(0)
		} else {
			t.Reset(s.cfg.PollEvery)
		}
	}
}
