// Package metrics holds the product's own Prometheus metrics (docs/operations.md lists
// them). A nil *Metrics is valid and records nothing, so tests and tools need not build
// one.
package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the product's counters and histograms.
type Metrics struct {
	replies      *prometheus.CounterVec
	retold       *prometheus.CounterVec
	offersTexted prometheus.Counter
	wavesRun     *prometheus.CounterVec
	bookings     *prometheus.CounterVec
	locks        *prometheus.CounterVec
	stripeEvents *prometheus.CounterVec
	sendErrors   *prometheus.CounterVec
	yesLatency   prometheus.Histogram

	accountErrors *prometheus.CounterVec
	deliveries    *prometheus.CounterVec
	refundsFailed *prometheus.CounterVec
	purged        *prometheus.CounterVec

	webhookAttempts *prometheus.CounterVec
	webhookLag      prometheus.Gauge

	// codesMu guards codes, the provider codes that have a series of their own in
	// accountErrors (see codeLabel).
	codesMu sync.Mutex
	codes   map[int]bool
}

// MaxCodeLabels is how many distinct provider error codes get a series of their own in
// slotrecovery_sms_account_errors_total; later codes are counted under "other". The
// codes come from the provider, not from users, but a bound keeps a provider change (or a
// bug) from multiplying series.
const MaxCodeLabels = 32

// The stages at which an account-side SMS error is seen: the provider refused the send,
// or a delivery report said the text failed.
const (
	StageSend     = "send"
	StageDelivery = "delivery"
)

// New registers the metrics on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		replies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_inbound_replies_total", Help: "Inbound SMS replies by outcome.",
		}, []string{"outcome"}),
		retold: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_inbound_answers_retold_total",
			Help: "Stored answers to inbound SMS that never reached Twilio over HTTP (the instance died or the connection broke), texted by the sweeper, by outcome.",
		}, []string{"outcome"}),
		offersTexted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "slotrecovery_offers_texted_total", Help: "Offer texts accepted by the SMS provider.",
		}),
		wavesRun: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_waves_run_total", Help: "Offer waves run, by result.",
		}, []string{"result"}),
		bookings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_bookings_total", Help: "Booking state changes, by status reached.",
		}, []string{"status"}),
		locks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_lock_obtains_total", Help: "Slot lock attempts by result (obtained, held, error).",
		}, []string{"result"}),
		stripeEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_stripe_events_total", Help: "Stripe webhook events by type and result.",
		}, []string{"type", "result"}),
		sendErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_twilio_send_errors_total", Help: "Failed SMS sends by the provider's error code.",
		}, []string{"code"}),
		accountErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_sms_account_errors_total",
			Help: "SMS failures caused by our own provider account or sender number (not the recipient), by stage (send, delivery) and provider error code.",
		}, []string{"stage", "code"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_sms_delivery_reports_total",
			Help: "SMS delivery reports from the provider, by status and failure reason.",
		}, []string{"status", "reason"}),
		refundsFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_refunds_failed_total",
			Help: "Refunds given up on, to be made by hand (the dashboard lists them), by reason (refused, retries_exhausted).",
		}, []string{"reason"}),
		purged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_retention_purged_rows_total",
			Help: "Rows deleted because they outlived the retention period (RETENTION_DAYS), by table.",
		}, []string{"table"}),
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slotrecovery_webhook_attempts_total",
			Help: "Outbound webhook delivery attempts, by result (succeeded, failed, refused: an address or URL not allowed).",
		}, []string{"result"}),
		webhookLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "slotrecovery_webhook_dispatch_lag_seconds",
			Help: "Age of the oldest outbound webhook event this instance's dispatcher found waiting at its last run (0: none waiting).",
		}),
		codes: make(map[int]bool),
		yesLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "slotrecovery_yes_answer_seconds",
			Help:    "Time from receiving a YES to answering it.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
	reg.MustRegister(m.replies, m.retold, m.offersTexted, m.wavesRun, m.bookings, m.locks, m.stripeEvents, m.sendErrors, m.yesLatency,
		m.accountErrors, m.deliveries, m.refundsFailed, m.purged, m.webhookAttempts, m.webhookLag)
	return m
}

// Reply counts an inbound reply's outcome.
func (m *Metrics) Reply(outcome string) {
	if m != nil {
		m.replies.WithLabelValues(outcome).Inc()
	}
}

// AnswerRetold counts a stored answer the sweeper texted because its HTTP answer never
// reached Twilio.
func (m *Metrics) AnswerRetold(outcome string) {
	if m != nil {
		m.retold.WithLabelValues(outcome).Inc()
	}
}

// OfferTexted counts one offer text handed to the provider.
func (m *Metrics) OfferTexted() {
	if m != nil {
		m.offersTexted.Inc()
	}
}

// WaveRun counts a wave by result (texted, quiet_hours, expired, stopped, error).
func (m *Metrics) WaveRun(result string) {
	if m != nil {
		m.wavesRun.WithLabelValues(result).Inc()
	}
}

// Booking counts a booking reaching status.
func (m *Metrics) Booking(status string) {
	if m != nil {
		m.bookings.WithLabelValues(status).Inc()
	}
}

// Lock counts a slot lock attempt by result: obtained, held or error.
func (m *Metrics) Lock(result string) {
	if m != nil {
		m.locks.WithLabelValues(result).Inc()
	}
}

// PaymentEvent counts a payment provider's event (or a reconciliation's read) by type
// and result. The metric keeps its name, slotrecovery_stripe_events_total: dashboards
// and alerts use it.
func (m *Metrics) PaymentEvent(typ, result string) {
	if m != nil {
		m.stripeEvents.WithLabelValues(typ, result).Inc()
	}
}

// SendError counts a failed send by the SMS provider's error code (0 when there was
// none). The metric keeps its name, slotrecovery_twilio_send_errors_total: dashboards
// and alerts use it.
func (m *Metrics) SendError(code int) {
	if m != nil {
		m.sendErrors.WithLabelValues(strconv.Itoa(code)).Inc()
	}
}

// YesAnswered observes the time from receiving a YES to answering it.
func (m *Metrics) YesAnswered(d time.Duration) {
	if m != nil {
		m.yesLatency.Observe(d.Seconds())
	}
}

// SMSAccountError counts an SMS failure that is our account's or sender number's fault
// (sms.ReasonAccount), seen at stage (StageSend or StageDelivery; anything else counts
// as "other"), with the provider's error code. Alert on it: no customer can fix it.
func (m *Metrics) SMSAccountError(stage string, code int) {
	if m == nil {
		return
	}
	if stage != StageSend && stage != StageDelivery {
		stage = "other"
	}
	m.accountErrors.WithLabelValues(stage, m.codeLabel(code)).Inc()
}

// codeLabel is code as a label value while fewer than MaxCodeLabels codes have been
// seen, and "other" after that for any new one.
func (m *Metrics) codeLabel(code int) string {
	m.codesMu.Lock()
	defer m.codesMu.Unlock()
	if !m.codes[code] {
		if len(m.codes) >= MaxCodeLabels {
			return "other"
		}
		m.codes[code] = true
	}
	return strconv.Itoa(code)
}

// SMSDelivery counts a delivery report by status and reason. Both must come from
// bounded sets (sms.DeliveryStatus and sms.Reason's String): they are labels.
func (m *Metrics) SMSDelivery(status, reason string) {
	if m != nil {
		m.deliveries.WithLabelValues(status, reason).Inc()
	}
}

// RefundFailed counts a refund given up on, by reason: "refused" (retrying cannot help),
// "retries_exhausted" or "lost" (its job died with its process on the last attempt);
// anything else counts as "other". Alert on it: the owner must
// refund by hand.
func (m *Metrics) RefundFailed(reason string) {
	if m == nil {
		return
	}
	if reason != "refused" && reason != "retries_exhausted" && reason != "lost" {
		reason = "other"
	}
	m.refundsFailed.WithLabelValues(reason).Inc()
}

// Purged counts n rows of table deleted by the retention purge. table is one of the
// server's own table names, a bounded set.
func (m *Metrics) Purged(table string, n int64) {
	if m != nil && n > 0 {
		m.purged.WithLabelValues(table).Add(float64(n))
	}
}

// The results of an outbound webhook attempt (WebhookAttempt).
const (
	WebhookSucceeded = "succeeded"
	WebhookFailed    = "failed"
	WebhookRefused   = "refused"
)

// WebhookAttempt counts one outbound webhook delivery attempt by result:
// WebhookSucceeded (a 2xx), WebhookFailed (another answer, a timeout, no connection) or
// WebhookRefused (the URL or its address is not allowed); anything else counts as
// "other".
func (m *Metrics) WebhookAttempt(result string) {
	if m == nil {
		return
	}
	if result != WebhookSucceeded && result != WebhookFailed && result != WebhookRefused {
		result = "other"
	}
	m.webhookAttempts.WithLabelValues(result).Inc()
}

// WebhookDispatchLag records how long the oldest outbound webhook event the dispatcher
// found had waited (0 when none was waiting): a backlog shows as a lag that grows.
func (m *Metrics) WebhookDispatchLag(d time.Duration) {
	if m != nil {
		m.webhookLag.Set(max(d, 0).Seconds())
	}
}
