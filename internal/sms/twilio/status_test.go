package twilio_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// statusForm is a status callback as Twilio posts it for an undelivered text.
func statusForm() url.Values {
	return url.Values{
		"AccountSid":    {"ACtest0123456789abcdef0123456789ab"},
		"ApiVersion":    {"2010-04-01"},
		"MessageSid":    {"SM0123456789abcdef0123456789abcdef"},
		"SmsSid":        {"SM0123456789abcdef0123456789abcdef"},
		"MessageStatus": {"undelivered"},
		"SmsStatus":     {"undelivered"},
		"ErrorCode":     {"30005"},
		"From":          {"+15555550100"},
		"To":            {"+15555550167"},
	}
}

func TestParseStatusCallback(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		change  func(url.Values)
		want    sms.DeliveryReport
		wantErr string // "" means valid
	}{
		{
			name:   "undelivered, unknown handset",
			change: func(url.Values) {},
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryUndelivered,
				Reason: sms.ReasonUnreachable, ErrorCode: 30005, To: "+15555550167", From: "+15555550100"},
		},
		{
			name: "delivered, no error code",
			change: func(f url.Values) {
				f.Set("MessageStatus", "delivered")
				f.Del("ErrorCode")
			},
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryDelivered,
				To: "+15555550167", From: "+15555550100"},
		},
		{
			name:   "opted out at the carrier",
			change: func(f url.Values) { f.Set("MessageStatus", "failed"); f.Set("ErrorCode", "21610") },
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryFailed,
				Reason: sms.ReasonOptedOut, ErrorCode: 21610, To: "+15555550167", From: "+15555550100"},
		},
		{
			name:   "our account: region not enabled",
			change: func(f url.Values) { f.Set("MessageStatus", "failed"); f.Set("ErrorCode", "21408") },
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryFailed,
				Reason: sms.ReasonAccount, ErrorCode: 21408, To: "+15555550167", From: "+15555550100"},
		},
		{
			name:   "handset off is not permanent",
			change: func(f url.Values) { f.Set("ErrorCode", "30003") },
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryUndelivered,
				Reason: sms.ReasonOther, ErrorCode: 30003, To: "+15555550167", From: "+15555550100"},
		},
		{
			name:   "error code 0 is none",
			change: func(f url.Values) { f.Set("MessageStatus", "sent"); f.Set("ErrorCode", "0") },
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliverySent,
				To: "+15555550167", From: "+15555550100"},
		},
		{
			name: "older field names only",
			change: func(f url.Values) {
				f.Del("MessageSid")
				f.Del("MessageStatus")
				f.Set("SmsStatus", "sent")
				f.Del("ErrorCode")
			},
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliverySent,
				To: "+15555550167", From: "+15555550100"},
		},
		{
			name:   "a status Twilio may add later",
			change: func(f url.Values) { f.Set("MessageStatus", "teleported"); f.Del("ErrorCode") },
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryUnknown,
				To: "+15555550167", From: "+15555550100"},
		},
		{
			name:   "an inbound status is not ours",
			change: func(f url.Values) { f.Set("MessageStatus", "received"); f.Del("ErrorCode") },
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryUnknown,
				To: "+15555550167", From: "+15555550100"},
		},
		{
			name:   "first value counts",
			change: func(f url.Values) { f["MessageStatus"] = []string{"delivered", "failed"}; f.Del("ErrorCode") },
			want: sms.DeliveryReport{MessageID: "SM0123456789abcdef0123456789abcdef", Status: sms.DeliveryDelivered,
				To: "+15555550167", From: "+15555550100"},
		},
		{name: "no sid", change: func(f url.Values) { f.Del("MessageSid"); f.Del("SmsSid") }, wantErr: "MessageSid is missing"},
		{name: "sid too long", change: func(f url.Values) { f.Set("MessageSid", "SM"+strings.Repeat("0", 63)) }, wantErr: "longer"},
		{name: "no status", change: func(f url.Values) { f.Del("MessageStatus"); f.Del("SmsStatus") }, wantErr: "MessageStatus is missing"},
		{name: "error code not a number", change: func(f url.Values) { f.Set("ErrorCode", "30005x") }, wantErr: "ErrorCode"},
		{name: "negative error code", change: func(f url.Values) { f.Set("ErrorCode", "-1") }, wantErr: "ErrorCode"},
		{name: "huge error code", change: func(f url.Values) { f.Set("ErrorCode", "99999999999999999999") }, wantErr: "ErrorCode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := statusForm()
			tc.change(f)
			got, err := twilio.ParseStatusCallback(f)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, twilio.ErrInvalidStatusCallback)
				require.ErrorContains(t, err, tc.wantErr)
				require.Zero(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
