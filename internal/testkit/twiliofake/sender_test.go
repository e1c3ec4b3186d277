package twiliofake_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

// postForm sends a form to one of the fake's paths, as twilio-go does.
func postForm(t *testing.T, s *twiliofake.Server, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(twiliofake.TestAccountSID, twiliofake.TestAuthToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	return res.StatusCode, body
}

// TestSenderOperationsAreHeldToTheContract: requests to the numbers, Messaging Services
// and A2P operations that Twilio would refuse are refused and recorded, each naming the
// parameter; well-formed ones are not.
func TestSenderOperationsAreHeldToTheContract(t *testing.T) {
	t.Parallel()
	s := twiliofake.New(t)
	status, svc := postForm(t, s, "/v1/Services", url.Values{"FriendlyName": {"shop"}, "StickySender": {"true"}})
	require.Equal(t, http.StatusCreated, status)
	require.Empty(t, s.TakeViolations())

	cases := []struct {
		name, path string
		form       url.Values
		violation  string
	}{
		{"a parameter Twilio does not have", "/v1/Services", url.Values{"FriendlyName": {"x"}, "Sticky": {"true"}},
			`CreateService request: parameter "Sticky" is not one of the operation's`},
		{"a boolean that is not one", "/2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/IncomingPhoneNumbers.json",
			url.Values{"PhoneNumber": {"+15125550100"}, "VoiceCallerIdLookup": {"maybe"}},
			`CreateIncomingPhoneNumber request: parameter "VoiceCallerIdLookup": "maybe" is not a boolean (true or false)`},
		{"a campaign without its message flow", "/v1/Services/" + svc["sid"].(string) + "/Compliance/Usa2p",
			url.Values{"BrandRegistrationSid": {"BN0123456789abcdef0123456789abcdef"}, "Description": {"d"},
				"MessageSamples": {"a", "b"}, "UsAppToPersonUsecase": {"MIXED"}, "HasEmbeddedLinks": {"false"}, "HasEmbeddedPhone": {"false"}},
			`CreateUsAppToPerson request: required parameter "MessageFlow" is missing`},
		{"a brand without its A2P profile", "/v1/a2p/BrandRegistrations",
			url.Values{"CustomerProfileBundleSid": {"BU0123456789abcdef0123456789abcdef"}},
			`CreateBrandRegistrations request: required parameter "A2PProfileBundleSid" is missing`},
	}
	for _, tc := range cases {
		status, body := postForm(t, s, tc.path, tc.form)
		require.Equal(t, http.StatusBadRequest, status, tc.name)
		require.EqualValues(t, 400, body["status"], tc.name)
		got := strs(s.TakeViolations())
		require.Contains(t, got, tc.violation, tc.name)
	}
	require.Len(t, s.Services(), 1, "nothing refused was made")
	require.Empty(t, s.Numbers())
}
