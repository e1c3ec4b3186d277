// Package jobs names the River jobs the server runs. The kind strings are stored in
// river_job rows: never rename them. Workers live with the code they call (offers, slots);
// this package only holds the arguments, so that a domain package can enqueue another's
// job inside its own transaction without importing it.
package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Inserter enqueues a job inside the caller's transaction, so the job exists only if the
// transaction commits. *river.Client[pgx.Tx] implements it.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	// InsertManyTx enqueues several jobs in one statement.
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Wave runs one wave of offers for an opening's generation.
type Wave struct {
	OpeningID  uuid.UUID `json:"opening_id"`
	Generation int       `json:"generation"`
	Wave       int       `json:"wave"`
}

// Kind implements river.JobArgs.
func (Wave) Kind() string { return "offer_wave" }

// InsertOpts makes a wave unique per (opening, generation, wave): a retried transaction
// cannot schedule the same wave twice. The worker retries at most a minute apart, so
// 1000 attempts ride out a long Postgres, Redis or Twilio outage; the wave chain is
// also what expires an unfilled opening, so it must not give up early.
func (Wave) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOffers, MaxAttempts: 1000, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// BookingSweep finishes what bookings owe their customers when the YES path could not
// give it: the payment link, and the news when the answer may not have reached them. It
// runs periodically. It is not unique: a run killed with its process must not hold the
// next ones up until River's rescue, and a run finds an earlier one still going by
// Postgres's advisory lock and returns at once.
type BookingSweep struct{}

// Kind implements river.JobArgs.
func (BookingSweep) Kind() string { return "bookings_sweep" }

// InsertOpts implements river.JobArgsWithInsertOpts: a missed or failed run is made up
// by the next.
func (BookingSweep) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueuePayments, MaxAttempts: 1}
}

// InboundSweep finishes the inbound texts whose handler died before answering: it
// handles them again and texts the answer. It runs periodically.
type InboundSweep struct{}

// Kind implements river.JobArgs.
func (InboundSweep) Kind() string { return "inbound_sweep" }

// InsertOpts implements river.JobArgsWithInsertOpts: one run a minute, the period it is
// enqueued at; a missed run is made up by the next. It is unique only within its minute
// (perPeriod): unique for as long as it runs, a run killed with its process held every
// later one up until River's rescue, 7 minutes, and the texts it finishes waited. Two
// runs at once are safe: each text is taken over by one of them.
func (InboundSweep) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueTexts, MaxAttempts: 3, UniqueOpts: perPeriod(time.Minute)}
}

// Text sends one SMS. Key makes it unique, so the same message is enqueued once.
type Text struct {
	Key      string    `json:"key"`
	ShopID   uuid.UUID `json:"shop_id"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	Body     string    `json:"body"`
	NotAfter time.Time `json:"not_after,omitzero"`
	// BookingID and WhileBookingStatus, when set, send the text only while the booking
	// is still in that status: a "your hold lapsed" text queued just before a late
	// payment confirmed the booking must not reach the customer after "you're booked".
	BookingID          uuid.UUID `json:"booking_id,omitzero"`
	WhileBookingStatus string    `json:"while_booking_status,omitempty"`
	// About is the conversation a text to someone else quotes (an owner's alert of a
	// customer's text), so that the customer's erasure finds it (TextsAbout).
	About uuid.UUID `json:"about,omitzero"`
}

// Kind implements river.JobArgs.
func (Text) Kind() string { return "sms_text" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (Text) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueTexts, MaxAttempts: 8, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// TextsTo is the JSON that River's `args @> …` matches the Text jobs of shopID to
// number by (an erasure deletes them): Text's own keys, so that it matches what Text
// stores (TestTextsToMatchesText).
func TextsTo(shopID uuid.UUID, number string) ([]byte, error) {
	return json.Marshal(struct {
		ShopID uuid.UUID `json:"shop_id"`
		To     string    `json:"to"`
	}{shopID, number})
}

// TextsAbout is the JSON that River's `args @> …` matches the Text jobs of shopID that
// quote conversation by (Text.About), as TextsTo does by number.
func TextsAbout(shopID, conversation uuid.UUID) ([]byte, error) {
	return json.Marshal(struct {
		ShopID uuid.UUID `json:"shop_id"`
		About  uuid.UUID `json:"about"`
	}{shopID, conversation})
}

// ForgetTextJobs are River jobs of texts to an erased customer that were running when
// the erasure committed: deleted once they end (package erasure). It holds their ids
// only.
type ForgetTextJobs struct {
	IDs []int64 `json:"ids"`
}

// Kind is the job's kind, stored with it: never rename it.
func (ForgetTextJobs) Kind() string { return "customer_erasure_jobs" }

// InsertOpts puts it on the texts' queue. Snoozing while a job still runs costs no
// attempt, so the attempts only count errors.
func (ForgetTextJobs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueTexts, MaxAttempts: 25}
}

// Refund refunds one payment of a booking in full: a payment that succeeded after its
// booking failed and the slot went to someone else, or a second payment for a booking
// that is confirmed already. Stripe's idempotency key is derived from the booking and
// the payment, and the job is unique per (booking, payment), so each payment is
// refunded at most once.
type Refund struct {
	BookingID uuid.UUID `json:"booking_id" river:"unique"`
	// PaymentIntentID is the payment to refund when the event carried it; empty means
	// the job reads it from the booking or its Checkout Session.
	PaymentIntentID string `json:"payment_intent_id,omitempty" river:"unique"`
}

// Kind implements river.JobArgs.
func (Refund) Kind() string { return "booking_refund" }

// RefundMaxAttempts keeps every retry inside Stripe's 24-hour idempotency window: River
// waits about attempt^4 seconds between attempts, so the 12th runs some 11 hours after
// the first.
const RefundMaxAttempts = 12

// InsertOpts implements river.JobArgsWithInsertOpts.
func (Refund) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueuePayments, MaxAttempts: RefundMaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Reconcile reads back from Stripe the pending bookings whose Checkout Session expired
// a while ago with no webhook seen, and applies what Stripe says. It runs periodically
// on its own queue (one worker), so a slow Stripe never holds up checkouts and refunds.
type Reconcile struct{}

// Kind implements river.JobArgs.
func (Reconcile) Kind() string { return "payments_reconcile" }

// InsertOpts implements river.JobArgsWithInsertOpts. A missed run is made up by the
// next one, so it is not retried for long. It is unique only within its minute
// (perPeriod): unique for as long as it ran, a run killed with its process stayed
// "running" and made every later one a skipped duplicate until River's rescue. The worker runs one at
// a time across the instances by an advisory lock instead, which dies with its process.
func (Reconcile) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueReconcile, MaxAttempts: 3, UniqueOpts: perPeriod(time.Minute)}
}

// Complete marks filled openings whose appointment has ended, with a confirmed
// booking, completed. It runs periodically.
type Complete struct{}

// Kind implements river.JobArgs.
func (Complete) Kind() string { return "openings_complete" }

// InsertOpts implements river.JobArgsWithInsertOpts: one run at a time; a missed run is
// made up by the next.
func (Complete) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOffers, MaxAttempts: 3, UniqueOpts: oneAtATime}
}

// Purge deletes what outlived the retention period (RETENTION_DAYS): Stripe's webhook
// events, the inbound texts and the text send claims. It runs periodically.
type Purge struct{}

// Kind implements river.JobArgs.
func (Purge) Kind() string { return "retention_purge" }

// InsertOpts implements river.JobArgsWithInsertOpts: one run at a time; a missed run is
// made up by the next, which deletes everything older than the period.
func (Purge) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOffers, MaxAttempts: 3, UniqueOpts: oneAtATime}
}

// AppointmentsDeclare declares the openings of the appointment book's claims left
// pending (internal/book: DeclarePending): a declaration whose failure a retry may cure,
// or one the owner offered whose attempt failed. It runs periodically.
type AppointmentsDeclare struct{}

// Kind is the job's kind, stored with it: never rename it.
func (AppointmentsDeclare) Kind() string { return "appointments_declare" }

// InsertOpts implements river.JobArgsWithInsertOpts: one run a minute, the period it is
// enqueued at; a missed run is made up by the next. Unique only within its minute
// (perPeriod), so a run killed with its process does not hold the next ones up until
// River's rescue. Two runs at once are safe: each claim is declared in a transaction
// holding its appointment's row lock, and the second finds it done.
func (AppointmentsDeclare) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOffers, MaxAttempts: 3, UniqueOpts: perPeriod(time.Minute)}
}

// AppointmentsPollFeeds polls the shops' calendar feeds (ics connectors) not polled
// for two minutes and applies each to its shop's book (internal/book: PollFeeds). It
// runs periodically.
type AppointmentsPollFeeds struct{}

// Kind is the job's kind, stored with it: never rename it.
func (AppointmentsPollFeeds) Kind() string { return "appointments_poll_feeds" }

// InsertOpts implements river.JobArgsWithInsertOpts: one run at a time (a run held up by
// slow feeds never has the next pile up behind it); not retried, since the next period's
// run polls whatever is due, this run's leftovers included.
func (AppointmentsPollFeeds) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOffers, MaxAttempts: 1, UniqueOpts: oneAtATime}
}

// perPeriod makes a periodic job unique within each period of d while it waits or runs
// (two leaders never enqueue it twice in one period), and no longer: a run killed with
// its process, still "running" until River's rescue, does not hold up the next period's,
// and a finished run does not hold up another requested in the same period.
func perPeriod(d time.Duration) river.UniqueOpts {
	return river.UniqueOpts{ByPeriod: d, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}
}

// oneAtATime makes a periodic job unique while it waits or runs, so slow runs never pile
// up behind each other; a finished run does not block the next.
var oneAtATime = river.UniqueOpts{ByState: []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}}

// Queues the server works.
const (
	QueueOffers   = "offers"
	QueuePayments = "payments"
	QueueTexts    = "texts"
	// QueueReconcile runs only jobs.Reconcile, one at a time.
	QueueReconcile = "reconcile"
)

// WebhookDelivery makes one attempt at delivering an event to one of a shop's webhook
// endpoints (internal/hooks). The dispatcher enqueues one per delivery in the
// transaction that creates it; an attempt that fails snoozes the job until the next
// attempt of the schedule (the delivery row counts the attempts, so River's own attempts
// only ride out errors of ours, such as Postgres being down). Manual is an owner's
// "send again": one attempt, outside the schedule.
type WebhookDelivery struct {
	DeliveryID uuid.UUID `json:"delivery_id"`
	Manual     bool      `json:"manual,omitempty"`
	// ShopID is set on manual jobs: a shop's "send again" jobs waiting or running are
	// counted by it (hooks.Config.MaxResends).
	ShopID uuid.UUID `json:"shop_id,omitzero"`
}

// Kind implements river.JobArgs.
func (WebhookDelivery) Kind() string { return "webhook_delivery" }

// InsertOpts implements river.JobArgsWithInsertOpts: on their own queue, so a slow
// endpoint never holds up texts or payments; unique while waiting or running, so a
// double-clicked "send again" is one attempt.
func (WebhookDelivery) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhooks, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// QueueOwnerTexts runs the owners' replies (jobs.Text queued by inbox.Reply), apart from
// every other text: one shop's thousands of replies, paced to its number's rate, hold
// at most this queue's workers, never the ones that send another shop's payment link
// or the answer to a YES (QueueTexts).
const QueueOwnerTexts = "owner_texts"

// QueueWebhooks runs only jobs.WebhookDelivery.
const QueueWebhooks = "webhooks"

// SMSRegistration walks a shop's US A2P 10DLC registration through the provider's ISV
// flow and watches its brand and campaign until they are decided (internal/senders). It
// snoozes between polls. Unique per shop and submission while it waits or runs: one at a
// time per shop, since a new submission may follow only a decided one (whose job then
// ends at once); the submission is in the key because River marks a finished job
// completed a moment after it returns, and a resubmission in that moment must still get
// its own job.
type SMSRegistration struct {
	ShopID     uuid.UUID `json:"shop_id"`
	Submission int       `json:"submission"`
}

// Kind implements river.JobArgs.
func (SMSRegistration) Kind() string { return "sms_registration" }

// InsertOpts implements river.JobArgsWithInsertOpts. Errors (the provider or Postgres
// down) are retried on River's schedule; snoozes between polls do not use attempts up.
func (SMSRegistration) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSenders, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: oneAtATime.ByState}}
}

// QueueSenders runs only jobs.SMSRegistration.
const QueueSenders = "senders"

// Queues is how many jobs of each queue one server instance works at once: the one
// place the queues are configured (the server's River client, and the tests that show
// what the configuration keeps apart).
func Queues() map[string]river.QueueConfig {
	return map[string]river.QueueConfig{
		// A paced wave holds a worker for its whole run: 8 starved 1,000 shops (their
		// first texts went out 13-26 s late).
		QueueOffers:   {MaxWorkers: 200},
		QueuePayments: {MaxWorkers: 4},
		QueueTexts:    {MaxWorkers: 8},
		// Owners' replies, apart: a shop's flood of them never holds the workers that
		// send payment links and answers.
		QueueOwnerTexts: {MaxWorkers: 4},
		// One run at a time (the job is unique too), apart from checkouts and refunds.
		QueueReconcile: {MaxWorkers: 1},
		// Outbound webhook deliveries, apart from everything else: a shop whose endpoints
		// are slow holds at most hooks.Config.PerShop of them across the instances (then
		// its jobs wait), so it never delays another shop's, nor any text or payment.
		QueueWebhooks: {MaxWorkers: 20},
		// Shops' A2P registrations: paced to Twilio's 1 call a second anyway.
		QueueSenders: {MaxWorkers: 2},
	}
}
