package sms_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
)

func TestDeliveryStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status        sms.DeliveryStatus
		final, failed bool
	}{
		{sms.DeliveryQueued, false, false},
		{sms.DeliveryAccepted, false, false},
		{sms.DeliveryScheduled, false, false},
		{sms.DeliverySending, false, false},
		{sms.DeliverySent, false, false},
		{sms.DeliveryDelivered, true, false},
		{sms.DeliveryRead, true, false},
		{sms.DeliveryUndelivered, true, true},
		{sms.DeliveryFailed, true, true},
		{sms.DeliveryCanceled, true, false},
		{sms.DeliveryUnknown, false, false},
	}
	for _, tc := range cases {
		t.Run(string(tc.status), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.final, tc.status.Final())
			require.Equal(t, tc.failed, tc.status.Failed())
		})
	}
}

func TestDeliveryReportErr(t *testing.T) {
	t.Parallel()
	delivered := sms.DeliveryReport{MessageID: "SM1", Status: sms.DeliveryDelivered}
	require.NoError(t, delivered.Err())

	optedOut := sms.DeliveryReport{MessageID: "SM2", Status: sms.DeliveryUndelivered, Reason: sms.ReasonOptedOut, ErrorCode: 21610}
	err := optedOut.Err()
	require.True(t, sms.Permanent(err))
	require.True(t, sms.OptedOut(err))
	var e *sms.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 21610, e.Code)
	require.Zero(t, e.Status, "a delivery report is no HTTP answer")

	account := sms.DeliveryReport{MessageID: "SM3", Status: sms.DeliveryFailed, Reason: sms.ReasonAccount, ErrorCode: 30034}
	require.True(t, sms.AccountProblem(account.Err()))
	require.False(t, sms.Permanent(account.Err()))

	offline := sms.DeliveryReport{MessageID: "SM4", Status: sms.DeliveryUndelivered, ErrorCode: 30003}
	require.Error(t, offline.Err())
	require.False(t, sms.Permanent(offline.Err()))
}
