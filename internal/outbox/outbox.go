// Package outbox sends the texts other packages queue (inbox.Queue, as jobs.Text): a
// payment link, a confirmation, a lapsed hold, a refund notice, a reply that missed
// Twilio's webhook window, an owner's reply or alert. It owns the text_claims table: each text is claimed by its
// key before it is sent, so it goes out at most once however often its job runs (a job
// killed mid-send is run again by River's rescue). It never texts a customer who opted
// out, was marked unreachable or was erased since the text was queued, nor a number
// that is no customer and opted out (a stranger's STOP, the owner's alert phone's), nor
// a text that went stale (NotAfter) or whose booking moved on (WhileBookingStatus).
//
// The packages that queue texts decide their wording (internal/texts) and enqueue them
// in their own transactions; this package only delivers.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/db"
	"github.com/slotrecovery/slotrecovery/internal/inbox"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
	"github.com/slotrecovery/slotrecovery/internal/metrics"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// Texter sends one SMS and returns the provider's message id.
type Texter interface {
	Text(ctx context.Context, m sms.Message) (sid string, err error)
}

// Bookings tells a booking's status, "" for a booking that no longer exists;
// *ledger.Service implements it.
type Bookings interface {
	BookingStatus(ctx context.Context, id uuid.UUID) (string, error)
}

// Config configures the service; zero fields mean the defaults.
type Config struct {
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics counts refused sends by the provider's code, as offers' are; nil counts
	// nothing.
	Metrics *metrics.Metrics
}

// queries is this package's one way to its SQL: sqlc's Queries holds no state, and
// each call is given the pool or the transaction it runs on.
var queries = db.New()

// Service sends queued transactional texts.
type Service struct {
	pool      *pgxpool.Pool
	texter    Texter
	customers *customers.Service
	bookings  Bookings
	cfg       Config
	log       *slog.Logger
	m         *metrics.Metrics
}

// New returns a Service.
func New(pool *pgxpool.Pool, texter Texter, customersSvc *customers.Service, bookings Bookings, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{pool: pool, texter: texter, customers: customersSvc, bookings: bookings, cfg: cfg, log: cfg.Logger, m: cfg.Metrics}
}

// TextWorker runs jobs.Text.
type TextWorker struct {
	river.WorkerDefaults[jobs.Text]
	Service *Service
}

// Work implements river.Worker.
func (w *TextWorker) Work(ctx context.Context, job *river.Job[jobs.Text]) error {
	return w.Service.SendText(ctx, job.Args)
}

// SendText sends a queued transactional text, unless it is stale or the customer opted
// out. An error means a retry may help; river.JobCancel wraps one that cannot. A text
// the owner's inbox shows (an owner's reply) gets its status there: sent with the
// provider's id, or not sent (inbox.MarkSent, MarkUnsent; nothing for other texts).
func (s *Service) SendText(ctx context.Context, a jobs.Text) error {
	sid, dropped, err := s.sendText(ctx, a)
	bg := context.WithoutCancel(ctx)
	switch {
	case sid != "":
		if _, merr := inbox.MarkSent(bg, s.pool, a.ShopID, a.Key, sid); merr != nil {
			s.log.WarnContext(ctx, "text sent; the inbox still shows it queued", "key", a.Key, "err", merr)
		}
	case dropped:
		if _, merr := inbox.MarkUnsent(bg, s.pool, a.ShopID, a.Key); merr != nil {
			s.log.WarnContext(ctx, "text not sent; the inbox still shows it queued", "key", a.Key, "err", merr)
		}
	}
	return err
}

// sendText is SendText's work. It returns the provider's id of a text it sent, or
// dropped for one that will never be sent (stale, the booking moved on, the number
// opted out, erased or unreachable, refused for good); neither for one a retry may
// send, or that may have gone out (claimed by an earlier run, an unknown outcome).
func (s *Service) sendText(ctx context.Context, a jobs.Text) (sid string, dropped bool, err error) {
	if !a.NotAfter.IsZero() && s.cfg.Now().After(a.NotAfter) {
		return "", true, nil // stale: a late payment link or reminder would only confuse
	}
	if a.BookingID != uuid.Nil && a.WhileBookingStatus != "" {
		status, err := s.bookings.BookingStatus(ctx, a.BookingID)
		if err != nil {
			return "", false, fmt.Errorf("check booking: %w", err)
		}
		if status != a.WhileBookingStatus {
			s.log.InfoContext(ctx, "text not sent: the booking moved on", "booking_id", a.BookingID, "status", status, "key", a.Key)
			return "", true, nil
		}
	}
	if a.To == "" {
		// The customer was erased after the text was queued (their phone is gone).
		s.log.InfoContext(ctx, "text not sent: no number (customer erased)", "key", a.Key)
		return "", true, nil
	}
	customer := uuid.Nil // the text's recipient as a customer of the shop, if they are one
	c, err := queries.CustomerGetByPhone(ctx, s.pool, db.CustomerGetByPhoneParams{ShopID: a.ShopID, Phone: a.To})
	if err == nil {
		customer = c.ID
	}
	switch {
	case err == nil && (c.OptedOutAt != nil || c.UnreachableAt != nil):
		s.log.InfoContext(ctx, "text not sent: customer opted out", "customer_id", c.ID, "key", a.Key)
		return "", true, nil
	case errors.Is(err, pgx.ErrNoRows):
		// Not a customer (an owner's reply to a stranger, an alert to the owner's own
		// phone, an answer the sweeper texts late), or one the owner erased since the
		// text was queued. A number that opted out (STOP, or any reasonable way of saying
		// it, kept as a suppression of the number) or was erased is never texted, however
		// long ago the text was queued.
		out, err := s.customers.OptedOut(ctx, a.ShopID, a.To)
		if err != nil {
			return "", false, err
		}
		if out {
			s.log.InfoContext(ctx, "text not sent: the number opted out or was erased", "key", a.Key)
			return "", true, nil
		}
	case err != nil:
		return "", false, fmt.Errorf("check customer: %w", err)
	}
	// At most once: the key is claimed before the send. A run that finds it claimed is
	// a retry of one that got that far (perhaps killed mid-send): the text went out, or
	// may have; a second copy is worse than none.
	n, err := queries.TextClaim(ctx, s.pool, db.TextClaimParams{Key: a.Key, ShopID: a.ShopID, Now: s.cfg.Now().UTC()})
	if err != nil {
		return "", false, fmt.Errorf("claim text: %w", err)
	}
	if n == 0 {
		s.log.InfoContext(ctx, "text not sent: claimed by an earlier run", "key", a.Key)
		return "", false, nil
	}
	sid, err = s.texter.Text(ctx, sms.Message{From: a.From, To: a.To, Body: a.Body})
	bg := context.WithoutCancel(ctx)
	if err == nil {
		if err := queries.TextClaimSent(bg, s.pool, db.TextClaimSentParams{Key: a.Key, MessageSid: pgtype.Text{String: sid, Valid: sid != ""}}); err != nil {
			s.log.WarnContext(ctx, "text sent; its message id not recorded", "key", a.Key, "err", err)
		}
		return sid, false, nil
	}
	// A refused text is counted by the provider's code, and what the refusal says of the
	// recipient or the shop is recorded as every failed text's is (customers.SMSFailed).
	ref := sms.Refused(err)
	s.m.SendError(ref.Code)
	switch ref.Then {
	case sms.ThenGiveUp:
		// The failure says what it says of the recipient or of the shop's own number, and
		// the job ends.
		if ferr := s.customers.SMSFailed(bg, customers.SMSFailure{ShopID: a.ShopID, Number: a.To, CustomerID: customer,
			Reason: ref.Reason, Code: ref.Code}); ferr != nil {
			return "", false, s.giveBack(bg, a.Key, ferr) // the retry is refused again and records it
		}
		if ref.Reason == sms.ReasonAccount {
			s.m.SMSAccountError(metrics.StageSend, ref.Code)
			s.log.ErrorContext(ctx, "the sms account cannot text this customer; check the shop's number and the account's geo permissions",
				"shop_id", a.ShopID, "provider_code", ref.Code, "key", a.Key)
		} else {
			s.log.InfoContext(ctx, "text not sent: the number cannot receive it", "customer_id", customer, "reason", ref.Reason,
				"provider_code", ref.Code, "key", a.Key)
		}
		return "", true, river.JobCancel(err)
	case sms.ThenAssumeSent:
		return "", false, nil // it may have gone out: a second copy is worse than none
	}
	// Nothing went out (refused for now, or the provider could not be reached): give the
	// claim back so the retry sends it.
	return "", false, s.giveBack(bg, a.Key, err)
}

// giveBack returns the claim of a text that surely did not go out, and err, so that
// River's retry sends it (or tries to).
func (s *Service) giveBack(ctx context.Context, key string, err error) error {
	if uerr := queries.TextUnclaim(ctx, s.pool, key); uerr != nil {
		return errors.Join(err, fmt.Errorf("unclaim text (it will not be retried): %w", uerr))
	}
	return err
}
