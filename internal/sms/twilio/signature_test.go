package twilio_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twilio/twilio-go/client"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

const webhookToken = "12345"

// twilioDocParams and twilioDocURL are twilio-go's own request validator test vector,
// whose signature is twilioDocSig.
var twilioDocParams = url.Values{
	"Digits":                {"1234"},
	"CallSid":               {"CA1234567890ABCDE"},
	"To":                    {"+18005551212"},
	"Caller":                {"+14158675309"},
	"From":                  {"+14158675309"},
	"ReasonConferenceEnded": {"test"},
	"Reason":                {"Participant"},
}

const (
	twilioDocURL = "https://mycompany.com/myapp.php?foo=1&bar=2"
	twilioDocSig = "vOEb5UThFn24KEfnOFLQY2AE5FY="
)

func inboundSMS() url.Values {
	return url.Values{
		"MessageSid": {"SM0123456789abcdef0123456789abcdef"},
		"AccountSid": {"ACtest0123456789abcdef0123456789ab"},
		"From":       {"+15555550167"},
		"To":         {"+15555550100"},
		"Body":       {"Yes please!"},
		"NumMedia":   {"0"},
	}
}

func TestSignatureKnownVector(t *testing.T) {
	t.Parallel()
	require.Equal(t, twilioDocSig, twilio.Signature(webhookToken, twilioDocURL, twilioDocParams))
}

func TestSignatureAcceptedByTwilioGo(t *testing.T) {
	t.Parallel()
	const hook = "https://slots.example.com/webhooks/twilio/sms"
	params := inboundSMS()
	sig := twilio.Signature(webhookToken, hook, params)

	rv := client.NewRequestValidator(webhookToken)
	require.True(t, rv.ValidateBody(hook, []byte(params.Encode()), sig), "twilio-go must accept our signature of a form body")
	require.True(t, twilio.NewValidator(webhookToken).Valid(hook, params, sig))
}

func TestValidatorRejectsTampering(t *testing.T) {
	t.Parallel()
	const hook = "https://slots.example.com/webhooks/twilio/sms"
	sig := twilio.Signature(webhookToken, hook, inboundSMS())
	v := twilio.NewValidator(webhookToken)

	cases := []struct {
		name   string
		url    string
		params func(url.Values)
		sig    string
		token  string
		want   bool
	}{
		{name: "untouched", want: true},
		{name: "default port added", url: "https://slots.example.com:443/webhooks/twilio/sms", want: true},
		{name: "body changed", params: func(p url.Values) { p.Set("Body", "No") }},
		{name: "from changed", params: func(p url.Values) { p.Set("From", "+15555550168") }},
		{name: "field added", params: func(p url.Values) { p.Set("OptOutType", "START") }},
		{name: "field removed", params: func(p url.Values) { p.Del("NumMedia") }},
		{name: "other path", url: "https://slots.example.com/webhooks/twilio/sms2"},
		{name: "other host", url: "https://evil.example.com/webhooks/twilio/sms"},
		{name: "http instead of https", url: "http://slots.example.com/webhooks/twilio/sms"},
		{name: "query added", url: hook + "?x=1"},
		{name: "signature changed", sig: "A" + sig[1:]},
		{name: "empty signature", sig: "-"},
		{name: "other token", token: "54321"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := hook
			if tc.url != "" {
				u = tc.url
			}
			p := inboundSMS()
			if tc.params != nil {
				tc.params(p)
			}
			s := sig
			switch tc.sig {
			case "":
			case "-":
				s = ""
			default:
				s = tc.sig
			}
			validator := v
			if tc.token != "" {
				validator = twilio.NewValidator(tc.token)
			}
			require.Equal(t, tc.want, validator.Valid(u, p, s))
		})
	}
}

func TestSignatureSortsKeysNotPairs(t *testing.T) {
	t.Parallel()
	// "Reason" sorts before "ReasonConferenceEnded"; sorting the concatenated pairs
	// instead ("ReasonConferenceEndedtest" < "ReasonParticipant") gives another signature.
	p := url.Values{"Reason": {"Participant"}, "ReasonConferenceEnded": {"test"}}
	const u = "https://example.com/hook"
	want := twilio.Signature("tok", u+"ReasonParticipantReasonConferenceEndedtest", nil)
	require.Equal(t, want, twilio.Signature("tok", u, p))
}
