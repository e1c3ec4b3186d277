package main

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// status posts a Twilio status callback to the instance at base, signed for the public
// URL as Twilio signs it (signature "" sends none; "forged" a wrong one).
func (e *env) status(base, sid, status string, errorCode int, signature string) int {
	e.t.Helper()
	form := url.Values{"MessageSid": {sid}, "MessageStatus": {status}, "AccountSid": {twiliofake.TestAccountSID},
		"To": {"+15550000071"}, "From": {"+15550009999"}}
	if errorCode != 0 {
		form.Set("ErrorCode", strconv.Itoa(errorCode))
	}
	switch signature {
	case "":
		signature = twilio.Signature(twiliofake.TestAuthToken, publicURL+webhooks.TwilioStatusPath, form)
	case "forged":
		signature = twilio.Signature("not-the-auth-token", publicURL+webhooks.TwilioStatusPath, form)
	}
	req, err := http.NewRequest(http.MethodPost, base+webhooks.TwilioStatusPath, strings.NewReader(form.Encode()))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", signature)
	res, err := e.client.Do(req)
	require.NoError(e.t, err)
	_ = res.Body.Close()
	return res.StatusCode
}

// TestDeliveryTruth: every offer text asks Twilio for its status; a signed report that
// the carrier refused it (here a carrier-level STOP, 21610) fails the offer and opts the
// customer out, and the next wave texts one more customer in its place. A forged report
// changes nothing.
func TestDeliveryTruth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "none", map[string]any{"wave_size": 1, "wave_interval_seconds": 10})
	first := e.newCustomer(base, shop, "+15550000071", true)
	second := e.newCustomer(base, shop, "+15550000072", true)
	third := e.newCustomer(base, shop, "+15550000073", true)
	op := e.newOpening(base, shop, 3*time.Hour)

	e.waveDone(op.ID, 1, 1)
	msgs := e.twilio.MessagesTo(first.Phone)
	require.Len(t, msgs, 1)
	require.Equal(t, publicURL+webhooks.TwilioStatusPath, msgs[0].StatusCallback, "the offer asks for its delivery reports")
	require.Positive(t, msgs[0].ValidityPeriod, "and ends before the slot is gone")
	sid := msgs[0].SID

	require.Equal(t, http.StatusForbidden, e.status(base, sid, "failed", 21610, "forged"))
	require.Equal(t, "sent", e.offerStatus(first.ID, op.ID), "a forged report changes nothing")
	require.Equal(t, http.StatusNoContent, e.status(base, sid, "sent", 0, ""))
	require.Equal(t, http.StatusNoContent, e.status(base, sid, "failed", 21610, ""))
	require.Equal(t, http.StatusNoContent, e.status(base, sid, "failed", 21610, ""), "a repeated report")
	require.Equal(t, "failed", e.offerStatus(first.ID, op.ID))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM customers WHERE id = $1 AND opted_out_at IS NOT NULL`, first.ID))

	e.until(asyncStep, "wave 2 done", func() bool {
		return e.count(`SELECT count(*) FROM river_job WHERE kind = 'offer_wave' AND args->>'opening_id' = $1
			AND (args->>'wave')::int = 2 AND state = 'completed'`, op.ID) == 1
	})
	require.Len(t, e.twilio.MessagesTo(second.Phone), 1, "wave 2 texts its customer")
	require.Len(t, e.twilio.MessagesTo(third.Phone), 1, "and one more in place of the undelivered offer")
	require.Equal(t, "no_offer", e.text(base, first.Phone, shop.SMSNumber, "YES").Outcome, "the opted-out customer cannot book")
}
