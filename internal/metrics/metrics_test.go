package metrics_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/metrics"
)

func TestSMSAccountError(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)

	m.SMSAccountError(metrics.StageSend, 21408)
	m.SMSAccountError(metrics.StageSend, 21408)
	m.SMSAccountError(metrics.StageDelivery, 30034)
	m.SMSAccountError("+15555550167", 21612) // not a stage: never a label of its own

	require.Equal(t, 2.0, counter(t, reg, "slotrecovery_sms_account_errors_total", map[string]string{"stage": "send", "code": "21408"}))
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_sms_account_errors_total", map[string]string{"stage": "delivery", "code": "30034"}))
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_sms_account_errors_total", map[string]string{"stage": "other", "code": "21612"}))
}

func TestSMSAccountErrorCodesAreBounded(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	for code := range metrics.MaxCodeLabels + 50 {
		m.SMSAccountError(metrics.StageSend, 40000+code)
	}
	m.SMSAccountError(metrics.StageSend, 40000) // a code seen before keeps its series

	require.Equal(t, metrics.MaxCodeLabels+1, series(t, reg, "slotrecovery_sms_account_errors_total"), "MaxCodeLabels codes and one \"other\"")
	require.Equal(t, 50.0, counter(t, reg, "slotrecovery_sms_account_errors_total", map[string]string{"stage": "send", "code": "other"}))
	require.Equal(t, 2.0, counter(t, reg, "slotrecovery_sms_account_errors_total", map[string]string{"stage": "send", "code": strconv.Itoa(40000)}))
}

func TestSMSDelivery(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.SMSDelivery("delivered", "other")
	m.SMSDelivery("undelivered", "opted_out")
	m.SMSDelivery("undelivered", "opted_out")
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_sms_delivery_reports_total", map[string]string{"status": "delivered", "reason": "other"}))
	require.Equal(t, 2.0, counter(t, reg, "slotrecovery_sms_delivery_reports_total", map[string]string{"status": "undelivered", "reason": "opted_out"}))
}

func TestNilMetricsRecordNothing(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.SMSAccountError(metrics.StageSend, 21408)
	m.SMSDelivery("delivered", "other")
	m.SendError(21610)
	m.WebhookAttempt(metrics.WebhookSucceeded)
	m.WebhookDispatchLag(time.Second)
}

func TestWebhookAttempt(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.WebhookAttempt(metrics.WebhookSucceeded)
	m.WebhookAttempt(metrics.WebhookFailed)
	m.WebhookAttempt(metrics.WebhookFailed)
	m.WebhookAttempt("https://x.example/?token=1") // never a label of its own
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_webhook_attempts_total", map[string]string{"result": "succeeded"}))
	require.Equal(t, 2.0, counter(t, reg, "slotrecovery_webhook_attempts_total", map[string]string{"result": "failed"}))
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_webhook_attempts_total", map[string]string{"result": "other"}))
}

// series returns how many series the metric name has.
func series(t *testing.T, g prometheus.Gatherer, name string) int {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

// counter returns the value of the counter name with exactly labels.
func counter(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, mt := range mf.GetMetric() {
			if len(mt.GetLabel()) != len(labels) {
				continue
			}
			for _, lp := range mt.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue next
				}
			}
			return mt.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

// TestRefundFailedLabelsAreBounded: the reason label takes three values and "other".
func TestRefundFailedLabelsAreBounded(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.RefundFailed("refused")
	m.RefundFailed("retries_exhausted")
	m.RefundFailed("retries_exhausted")
	m.RefundFailed("lost")
	m.RefundFailed("stripe 400 invalid_request_error: pi_123") // never a label of its own
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_refunds_failed_total", map[string]string{"reason": "refused"}))
	require.Equal(t, 2.0, counter(t, reg, "slotrecovery_refunds_failed_total", map[string]string{"reason": "retries_exhausted"}))
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_refunds_failed_total", map[string]string{"reason": "other"}))
	require.Equal(t, 1.0, counter(t, reg, "slotrecovery_refunds_failed_total", map[string]string{"reason": "lost"}))
	require.Equal(t, 4, series(t, reg, "slotrecovery_refunds_failed_total"))
}

func TestPurged(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Purged("text_claims", 2500)
	m.Purged("text_claims", 0)
	m.Purged("inbound_messages", 3)
	require.Equal(t, 2500.0, counter(t, reg, "slotrecovery_retention_purged_rows_total", map[string]string{"table": "text_claims"}))
	require.Equal(t, 3.0, counter(t, reg, "slotrecovery_retention_purged_rows_total", map[string]string{"table": "inbound_messages"}))
	var nilM *metrics.Metrics
	nilM.RefundFailed("refused")
	nilM.Purged("text_claims", 1)
}
