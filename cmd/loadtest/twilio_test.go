package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTwilioFakeKeepsWhatBreaksTheContract: the load tool's fake Twilio accepts a text
// as the server sends it without a word, and keeps, for the end of the run, what breaks
// Twilio's documents, accepting the text all the same.
func TestTwilioFakeKeepsWhatBreaksTheContract(t *testing.T) {
	t.Parallel()
	tw, err := startTwilio()
	require.NoError(t, err)
	t.Cleanup(tw.close)
	post := func(form url.Values) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
			tw.url+"/2010-04-01/Accounts/"+accountSID+"/Messages.json", strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(accountSID, authToken)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}

	text := url.Values{"To": {"+15555550167"}, "From": {"+15555550100"}, "Body": {"A 10:00 slot opened. Reply YES to book."},
		"ValidityPeriod": {"600"}, "StatusCallback": {"http://127.0.0.1:1/webhooks/twilio/status"}}
	require.Equal(t, http.StatusCreated, post(text))
	require.Empty(t, tw.violations())

	text.Del("To")
	text.Set("Priority", "high")
	require.Equal(t, http.StatusCreated, post(text))
	var got []string
	for _, v := range tw.violations() {
		got = append(got, v.String())
	}
	require.ElementsMatch(t, []string{
		`CreateMessage request: parameter "Priority" is not one of the operation's`,
		`CreateMessage request: required parameter "To" is missing`,
	}, got)
	require.EqualValues(t, 2, tw.count.Load())
}
