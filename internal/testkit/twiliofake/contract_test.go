package twiliofake_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/testkit/twiliofake"
)

func contract(t testing.TB) *twiliofake.Contract {
	t.Helper()
	c, err := twiliofake.LoadContract()
	require.NoError(t, err)
	return c
}

func TestContractLoadsOncePerProcess(t *testing.T) {
	t.Parallel()
	c := contract(t)
	again := contract(t)
	require.Same(t, c, again, "every fake shares one Contract")
	t.Logf("Twilio's three documents (2.7 MB) loaded and checked in %s", c.LoadTime.Round(time.Millisecond))
}

// strs turns violations into their lines, for comparisons.
func strs(vs []twiliofake.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

// checkRequest checks a form posted to path against the contract.
func checkRequest(t *testing.T, method, path string, form url.Values) (*twiliofake.Match, []string) {
	t.Helper()
	body := form.Encode()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://127.0.0.1:1"+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	m, vs := contract(t).CheckRequest(req, []byte(body))
	return m, strs(vs)
}

func TestContractRequests(t *testing.T) {
	t.Parallel()
	const service = "MG0123456789abcdef0123456789abcdef"
	campaign := url.Values{
		"BrandRegistrationSid": {"BN0123456789abcdef0123456789abcdef"},
		"Description":          {"Texts customers when an appointment frees up"},
		"MessageFlow":          {"Customers opt in when they join a shop's waiting list"},
		"MessageSamples":       {"A 10:00 slot opened. Reply YES to book.", "You're booked for 10:00."},
		"UsAppToPersonUsecase": {"CUSTOMER_CARE"},
		"HasEmbeddedLinks":     {"true"},
		"HasEmbeddedPhone":     {"false"},
		"OptOutKeywords":       {"STOP", "CANCEL"},
	}
	cases := []struct {
		name      string
		method    string
		path      string
		change    func(url.Values) url.Values
		operation string   // "" when the documents have none
		want      []string // the violations, exactly; none when empty
	}{
		{name: "a text as our sender makes it", operation: "CreateMessage"},
		{name: "parameter Twilio does not have", operation: "CreateMessage",
			change: func(f url.Values) url.Values { f.Set("Priority", "high"); return f },
			want:   []string{`CreateMessage request: parameter "Priority" is not one of the operation's`}},
		{name: "missing required parameter", operation: "CreateMessage",
			change: func(f url.Values) url.Values { f.Del("To"); return f },
			want:   []string{`CreateMessage request: required parameter "To" is missing`}},
		{name: "integer that is not one", operation: "CreateMessage",
			change: func(f url.Values) url.Values { f.Set("ValidityPeriod", "10m"); return f },
			want:   []string{`CreateMessage request: parameter "ValidityPeriod": "10m" is not an integer`}},
		{name: "boolean that is not one", operation: "CreateMessage",
			change: func(f url.Values) url.Values { f.Set("SmartEncoded", "yes"); return f },
			want:   []string{`CreateMessage request: parameter "SmartEncoded": "yes" is not a boolean (true or false)`}},
		{name: "relative status callback", operation: "CreateMessage",
			change: func(f url.Values) url.Values { f.Set("StatusCallback", "/webhooks/twilio/status"); return f },
			want:   []string{`CreateMessage request: parameter "StatusCallback": string doesn't match the format "uri": not an absolute URL`}},
		{name: "messaging service sid of the wrong shape", operation: "CreateMessage",
			change: func(f url.Values) url.Values { f.Set("MessagingServiceSid", "MGshop1"); return f },
			want: []string{
				`CreateMessage request: parameter "MessagingServiceSid": minimum string length is 34`,
				`CreateMessage request: parameter "MessagingServiceSid": string doesn't match the regular expression "^MG[0-9a-fA-F]{32}$"`,
			}},
		{name: "repeated keys of an array read as an array", operation: "CreateMessage",
			change: func(f url.Values) url.Values {
				f["MediaUrl"] = []string{"https://example.com/a.png", "https://example.com/b.png"}
				return f
			}},
		{name: "repeated key of a string", operation: "CreateMessage",
			change: func(f url.Values) url.Values { f.Add("To", "+15555550168"); return f },
			want:   []string{`CreateMessage request: parameter "To" is sent 2 times, but it is not an array`}},
		{name: "account sid of the wrong shape", operation: "CreateMessage",
			path: "/2010-04-01/Accounts/ACshop/Messages.json",
			want: []string{
				`CreateMessage request: parameter "AccountSid" in path: minimum string length is 34`,
				`CreateMessage request: parameter "AccountSid" in path: string doesn't match the regular expression "^AC[0-9a-fA-F]{32}$"`,
			}},
		{name: "query parameter", operation: "CreateMessage",
			path: "/2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/Messages.json?async=1",
			want: []string{`CreateMessage request: query parameter "async" is not one of the operation's`}},
		{name: "path Twilio does not have",
			path: "/2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/Texts.json",
			want: []string{"POST /2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/Texts.json request: Twilio's API has no such path " +
				"(in twilio_api_v2010.json, twilio_messaging_v1.json, twilio_trusthub_v1.json)"}},
		{name: "method Twilio does not have", method: http.MethodPatch,
			want: []string{"PATCH /2010-04-01/Accounts/" + twiliofake.TestAccountSID + "/Messages.json request: " +
				"Twilio's API has no PATCH operation on this path, only GET (ListMessage), POST (CreateMessage)"}},
		// The A2P operations to come, on messaging.twilio.com, route on the same base URL;
		// their keyword and sample lists are repeated keys.
		{name: "campaign create with arrays", operation: "CreateUsAppToPerson",
			path:   "/v1/Services/" + service + "/Compliance/Usa2p",
			change: func(url.Values) url.Values { return campaign }},
		{name: "campaign create without samples", operation: "CreateUsAppToPerson",
			path: "/v1/Services/" + service + "/Compliance/Usa2p",
			change: func(url.Values) url.Values {
				f := url.Values{}
				for k, v := range campaign {
					f[k] = v
				}
				f.Del("MessageSamples")
				f.Set("HasEmbeddedLinks", "1")
				return f
			},
			want: []string{
				`CreateUsAppToPerson request: parameter "HasEmbeddedLinks": "1" is not a boolean (true or false)`,
				`CreateUsAppToPerson request: required parameter "MessageSamples" is missing`,
			}},
		{name: "customer profile list on trusthub", method: http.MethodGet, operation: "ListCustomerProfile",
			path: "/v1/CustomerProfiles", change: func(url.Values) url.Values { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			form := url.Values{"To": {"+15555550167"}, "From": {"+15555550100"}, "Body": {"A 10:00 slot opened. Reply YES to book."},
				"ValidityPeriod": {"600"}, "StatusCallback": {"https://slots.example/webhooks/twilio/status"}}
			if tc.change != nil {
				form = tc.change(form)
			}
			method := cmpOr(tc.method, http.MethodPost)
			path := cmpOr(tc.path, "/2010-04-01/Accounts/"+twiliofake.TestAccountSID+"/Messages.json")
			m, got := checkRequest(t, method, path, form)
			if tc.operation == "" {
				require.Nil(t, m)
			} else {
				require.NotNil(t, m)
				require.Equal(t, tc.operation, m.Operation)
			}
			require.ElementsMatch(t, tc.want, got)
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestContractAnswers(t *testing.T) {
	t.Parallel()
	m, vs := checkRequest(t, http.MethodPost, "/2010-04-01/Accounts/"+twiliofake.TestAccountSID+"/Messages.json",
		url.Values{"To": {"+15555550167"}, "From": {"+15555550100"}, "Body": {"hi"}})
	require.Empty(t, vs)
	const good = `{"account_sid":"` + twiliofake.TestAccountSID + `","api_version":"2010-04-01","body":"hi",` +
		`"date_created":"Thu, 24 Aug 2023 05:01:45 +0000","date_sent":null,"date_updated":"Thu, 24 Aug 2023 05:01:45 +0000",` +
		`"direction":"outbound-api","error_code":null,"error_message":null,"from":"+15555550100","messaging_service_sid":null,` +
		`"num_media":"0","num_segments":"1","price":null,"price_unit":"USD","sid":"SM0123456789abcdef0123456789abcdef",` +
		`"status":"queued","subresource_uris":{"media":"/Media.json"},"to":"+15555550167","uri":"/x.json"}`
	edit := func(old, new string) string {
		require.Contains(t, good, old)
		return strings.Replace(good, old, new, 1)
	}
	const twilioError = `{"code":21604,"message":"A 'To' phone number is required.","more_info":"https://www.twilio.com/docs/errors/21604","status":400}`
	cases := []struct {
		name   string
		status int
		body   string
		want   []string
	}{
		{name: "a message as Twilio answers it", status: 201, body: good},
		{name: "status Twilio does not have", status: 201, body: edit(`"status":"queued"`, `"status":"sending_soon"`),
			want: []string{`CreateMessage answer: 201: response body doesn't match schema #/components/schemas/api.v2010.account.message: ` +
				`Error at "/status": value is not one of the allowed values ["queued","sending","sent","failed","delivered","undelivered",` +
				`"receiving","received","accepted","scheduled","read","partially_delivered","canceled"]`}},
		{name: "property the resource does not have", status: 201, body: edit(`"body":"hi",`, `"body":"hi","segments":1,`),
			want: []string{`CreateMessage answer: 201: property "segments" at "/" is not one the documents list`}},
		{name: "date that is not RFC 2822", status: 201, body: edit(`"date_created":"Thu, 24 Aug 2023 05:01:45 +0000"`, `"date_created":"2023-08-24T05:01:45Z"`),
			want: []string{`CreateMessage answer: 201: response body doesn't match schema #/components/schemas/api.v2010.account.message: ` +
				`Error at "/date_created": string doesn't match the format "date-time-rfc-2822": not an RFC 2822 date-time such as "Thu, 24 Aug 2023 05:01:45 +0000"`}},
		{name: "error code as a string", status: 201, body: edit(`"error_code":null`, `"error_code":"30003"`),
			want: []string{`CreateMessage answer: 201: response body doesn't match schema #/components/schemas/api.v2010.account.message: ` +
				`Error at "/error_code": value must be an integer`}},
		{name: "status code the operation does not answer", status: 200, body: good,
			want: []string{`CreateMessage answer: Twilio answers CreateMessage with 201, never 200`}},
		{name: "Twilio's error body", status: 400, body: twilioError},
		{name: "error body whose status is not the answer's", status: 500, body: twilioError,
			want: []string{`CreateMessage answer: 500: the error body's status 400 is not the HTTP status`}},
		{name: "error body without more_info", status: 400, body: `{"code":21604,"message":"no To","status":400}`,
			want: []string{`CreateMessage answer: 400: Error at "/more_info": property "more_info" is missing`}},
		{name: "redirect", status: 302, body: twilioError,
			want: []string{`CreateMessage answer: 302: Twilio answers a REST API request with 2xx, or 4xx/5xx and an error body`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := contract(t).CheckAnswer(m, tc.status, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, []byte(tc.body))
			require.ElementsMatch(t, tc.want, strs(got))
		})
	}
}

func TestContractStatusCallbacks(t *testing.T) {
	t.Parallel()
	const sid = "SM0123456789abcdef0123456789abcdef"
	good := url.Values{"AccountSid": {twiliofake.TestAccountSID}, "ApiVersion": {"2010-04-01"}, "MessageSid": {sid}, "SmsSid": {sid},
		"MessageStatus": {"undelivered"}, "SmsStatus": {"undelivered"}, "To": {"+15555550167"}, "From": {"+15555550100"}, "ErrorCode": {"30003"}}
	cases := []struct {
		name   string
		change func(url.Values)
		want   []string
	}{
		{name: "as Twilio sends it", change: func(url.Values) {}},
		{name: "status Twilio does not have", change: func(f url.Values) { f.Set("MessageStatus", "bounced") },
			want: []string{`CreateMessage status callback: field "MessageStatus" (status): value is not one of the allowed values ` +
				`["queued","sending","sent","failed","delivered","undelivered","receiving","received","accepted","scheduled","read","partially_delivered","canceled"]`}},
		{name: "error code that is not a number", change: func(f url.Values) { f.Set("ErrorCode", "carrier") },
			want: []string{`CreateMessage status callback: field "ErrorCode" (error_code) is not an integer`}},
		{name: "field Twilio does not send", change: func(f url.Values) { f.Set("Reason", "off") },
			want: []string{`CreateMessage status callback: field "Reason" is not one Twilio sends`}},
		{name: "no message sid", change: func(f url.Values) { f.Del("MessageSid") },
			want: []string{`CreateMessage status callback: field "MessageSid" is missing`}},
		{name: "sid of another resource", change: func(f url.Values) { f.Set("MessageSid", "CA0123456789abcdef0123456789abcdef") },
			want: []string{`CreateMessage status callback: field "MessageSid" (sid): string doesn't match the regular expression "^(SM|MM)[0-9a-fA-F]{32}$"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := url.Values{}
			for k, v := range good {
				f[k] = slices.Clone(v)
			}
			tc.change(f)
			require.ElementsMatch(t, tc.want, strs(contract(t).CheckStatusCallback(f)))
		})
	}
}

// TestTwilioGoKeepsTheContract sends today's texts through twilio-go, as the product
// does (with a status callback and a validity period), and lets the fake report them:
// nothing the fake saw or did breaks Twilio's documents.
func TestTwilioGoKeepsTheContract(t *testing.T) {
	t.Parallel()
	fake := twiliofake.New(t)
	rcv := newReceiver(t, twiliofake.TestAuthToken)
	tw := sender(t, fake, twiliofake.TestAccountSID, twiliofake.TestAuthToken, rcv.URL())
	fake.AutoReport(true)
	fake.UndeliverNumber("+15555550168", 30003)

	for _, to := range []string{"+15555550167", "+15555550168"} {
		_, err := tw.Text(t.Context(), sms.Message{From: "+15555550100", To: to, Body: "A 10:00 slot opened. Reply YES to book.",
			ValidityPeriod: 10 * time.Minute})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(fake.Callbacks()) == 4 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 2, fake.Count())
	require.Empty(t, fake.Violations())
}

// failRecorder is a testing.TB that keeps what New's cleanup reports.
type failRecorder struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (r *failRecorder) Helper()          {}
func (r *failRecorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *failRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *failRecorder) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (r *failRecorder) end() {
	for _, f := range slices.Backward(r.cleanups) {
		f()
	}
}

// TestViolationFailsTheTest: a request that breaks the contract is refused with Twilio's
// error body, and the test that made the fake fails when it ends, naming the operation
// and the violation, even when the code under test let the 400 pass.
func TestViolationFailsTheTest(t *testing.T) {
	t.Parallel()
	rec := &failRecorder{}
	fake := twiliofake.New(rec)

	form := offer("+15555550167")
	form.Set("Priority", "high")
	status, body := send(t, fake, form)
	require.Equal(t, http.StatusBadRequest, status)
	require.EqualValues(t, 20001, body["code"])
	require.EqualValues(t, 400, body["status"])
	require.Equal(t, `twiliofake: the request breaks Twilio's API contract for CreateMessage: parameter "Priority" is not one of the operation's`, body["message"])
	require.Zero(t, fake.Count())

	// An answer Twilio could not give: the fake told to fail with a 2xx status.
	fake.FailNext(1, 20500, http.StatusOK)
	status, _ = send(t, fake, offer("+15555550167"))
	require.Equal(t, http.StatusOK, status)

	// A status callback Twilio would not send: a status it does not have.
	rcv := newReceiver(t, twiliofake.TestAuthToken)
	form = offer("+15555550167")
	form.Set("StatusCallback", rcv.URL())
	status, body = send(t, fake, form)
	require.Equal(t, http.StatusCreated, status)
	_, err := fake.Report(t.Context(), body["sid"].(string), "bounced", 0)
	require.NoError(t, err)

	got := strs(fake.Violations())
	require.Len(t, got, 4)
	require.Equal(t, `CreateMessage request: parameter "Priority" is not one of the operation's`, got[0])
	require.Equal(t, `CreateMessage answer: Twilio answers CreateMessage with 201, never 200`, got[1])
	require.Contains(t, got[2], `CreateMessage status callback: field "MessageStatus" (status): value is not one of the allowed values`)
	require.Contains(t, got[3], `CreateMessage status callback: field "SmsStatus" (status): value is not one of the allowed values`)
	fake.Reset()
	require.Len(t, fake.Violations(), 4, "Reset keeps the violations")

	rec.end()
	require.Len(t, rec.errors, 1)
	require.Contains(t, rec.errors[0], "twiliofake: 4 request(s), answer(s) or status callback(s) broke Twilio's contract")
	for _, v := range got {
		require.Contains(t, rec.errors[0], v)
	}
}

// BenchmarkCheckCreateMessage is what the contract costs each text: checking a create
// as our sender makes it and the fake's answer.
func BenchmarkCheckCreateMessage(b *testing.B) {
	c, err := twiliofake.LoadContract()
	require.NoError(b, err)
	form := url.Values{"To": {"+15555550167"}, "From": {"+15555550100"}, "Body": {"A 10:00 slot opened. Reply YES to book."},
		"ValidityPeriod": {"600"}, "StatusCallback": {"https://slots.example/webhooks/twilio/status"}}
	body := []byte(form.Encode())
	answer := []byte(`{"account_sid":"` + twiliofake.TestAccountSID + `","api_version":"2010-04-01","body":"hi",` +
		`"date_created":"Thu, 24 Aug 2023 05:01:45 +0000","direction":"outbound-api","from":"+15555550100",` +
		`"num_segments":"1","sid":"SM0123456789abcdef0123456789abcdef","status":"queued","to":"+15555550167","uri":"/x.json"}`)
	header := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/2010-04-01/Accounts/"+twiliofake.TestAccountSID+"/Messages.json", nil)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		m, vs := c.CheckRequest(req, body)
		if len(vs) > 0 {
			b.Fatal(vs)
		}
		if vs := c.CheckAnswer(m, http.StatusCreated, header, answer); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
}
