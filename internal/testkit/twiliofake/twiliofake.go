// Package twiliofake is a local stand-in for Twilio's REST Messages API, for tests
// (Twilio ships no local server). It serves
// POST /2010-04-01/Accounts/{AccountSid}/Messages.json on an httptest.Server with HTTP
// basic auth, records the messages it accepts, answers with Twilio-shaped JSON, and can
// be told to fail or to be slow. Point the sender at it with twilio.Config.APIURL (or
// TWILIO_API_URL) set to URL().
//
// Like Twilio, it reports what became of a message to the message's StatusCallback URL,
// with a form signed by the auth token (X-Twilio-Signature): when a test calls Report,
// or by itself after every accepted message once AutoReport is on.
//
// It is held to Twilio's contract: every request it receives, every answer it gives and
// every status callback it sends is checked against Twilio's published OpenAPI documents
// (testdata/twilio-oai: the API v2010, Messaging v1 and TrustHub v1, served on one base
// URL and routed by path). A request Twilio would not take (a parameter the operation
// does not have, a required one missing, a value of the wrong type, a path or method
// Twilio does not have, or an operation the fake does not serve yet) is answered with
// Twilio's error body (400 for a parameter, 404 for a path or an operation the fake does
// not serve), and every violation is recorded: the test that made the fake fails when it
// ends (New's cleanup), even if the code under test swallowed the error. Violations and
// TakeViolations show them.
//
// A Server is safe for concurrent use.
package twiliofake

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/sms"
	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// Default credentials used by New. Both are alphanumeric, as twilio-go requires.
const (
	// TestAccountSID is the account SID New accepts: "AC" and 32 characters, as in Twilio.
	// Twilio's documents hold an account SID to ^AC[0-9a-fA-F]{32}$.
	TestAccountSID = "ACfa4e0123456789abcdef0123456789ab"
	// TestAuthToken is the auth token New accepts.
	TestAuthToken = "testtoken0123456789abcdef0123456"
)

// Message is a message the fake accepted.
type Message struct {
	// SID is the "SM…" id the fake answered with.
	SID string
	// AccountSID is the account in the request path.
	AccountSID string
	// From, To and Body are the form fields of the same names.
	From, To, Body string
	// MessagingServiceSID is the MessagingServiceSid field, if sent.
	MessagingServiceSID string
	// ValidityPeriod is the ValidityPeriod field (whole seconds); 0 when not sent.
	ValidityPeriod time.Duration
	// StatusCallback is the StatusCallback field: where Report posts the message's
	// status; "" when not sent.
	StatusCallback string
	// Form holds every form field as received.
	Form url.Values
	// DateCreated is when the fake accepted the message.
	DateCreated time.Time
	// sender is the number a Messaging Service picked (the first of its pool, as a
	// sticky sender would for a new recipient): what status callbacks give as From.
	sender string
}

// clone copies m deeply enough that callers cannot change what the fake recorded.
func (m Message) clone() Message {
	m.Form = maps.Clone(m.Form)
	for k, vs := range m.Form {
		m.Form[k] = slices.Clone(vs)
	}
	return m
}

// failure is an injected error answer.
type failure struct {
	code, status int
}

// Server is a fake Twilio Messages API.
type Server struct {
	srv        *httptest.Server
	sid, token string
	done       chan struct{} // closed at cleanup so delayed handlers give up
	// ctx is cancelled at cleanup, ending automatic reports still in flight.
	ctx    context.Context
	cancel context.CancelFunc
	client *http.Client // posts status callbacks
	// reporting counts automatic reports in flight; cleanup waits for them.
	reporting sync.WaitGroup

	mu          sync.Mutex
	closed      bool
	messages    []Message
	attempts    int
	failNumber  map[string]failure
	failNext    []failure
	delay       time.Duration
	gate        chan struct{} // while set, requests wait until it is closed (Hold)
	held        int           // requests waiting at the gate
	autoReport  bool
	undelivered map[string]int // To → error code AutoReport reports it undelivered with
	callbacks   []Callback
	violations  []Violation // kept across Reset: each must fail the test

	contract *Contract

	// acctOnce makes account, the numbers, services and registrations (sender.go).
	acctOnce sync.Once
	account  *account
}

// New starts a fake that accepts TestAccountSID and TestAuthToken. It is closed when
// the test ends, and the test fails then if anything broke Twilio's contract (see
// Violations).
func New(t testing.TB) *Server {
	t.Helper()
	return NewWithCreds(t, TestAccountSID, TestAuthToken)
}

// NewWithCreds starts a fake that accepts only the given account SID and auth token.
// It is closed when the test ends, and the test fails then if anything broke Twilio's
// contract (see Violations).
func NewWithCreds(t testing.TB, sid, token string) *Server {
	t.Helper()
	contract, err := LoadContract()
	if err != nil {
		t.Fatalf("twiliofake: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		contract:    contract,
		sid:         sid,
		token:       token,
		done:        make(chan struct{}),
		ctx:         ctx,
		cancel:      cancel,
		client:      &http.Client{Timeout: 15 * time.Second}, // as long as Twilio waits for a webhook
		failNumber:  make(map[string]failure),
		undelivered: make(map[string]int),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(func() {
		s.mu.Lock()
		s.closed = true // no new automatic reports
		s.mu.Unlock()
		close(s.done)
		s.cancel()
		s.reporting.Wait()
		s.srv.Close()
		// Every handler has returned: nothing more can be recorded.
		if vs := s.TakeViolations(); len(vs) > 0 {
			t.Errorf("twiliofake: %d request(s), answer(s) or status callback(s) broke Twilio's contract "+
				"(its OpenAPI documents in internal/twiliofake/testdata/twilio-oai):\n%s", len(vs), Summary(vs, 20))
		}
	})
	return s
}

// Violations returns a copy of what broke Twilio's contract so far: requests the fake
// received, answers it gave and status callbacks it sent, in the order they were found.
// Reset does not forget them.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

// TakeViolations returns the violations found so far and forgets them, so that a test
// that breaks the contract on purpose can check what the fake saw and still pass.
func (s *Server) TakeViolations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.violations
	s.violations = nil
	return vs
}

// Summary writes vs one a line, at most limit of them and a count of the rest.
func Summary(vs []Violation, limit int) string {
	var b strings.Builder
	for i, v := range vs {
		if i == limit {
			fmt.Fprintf(&b, "  ... and %d more\n", len(vs)-limit)
			break
		}
		b.WriteString("  " + v.String() + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (s *Server) violate(vs ...Violation) {
	if len(vs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, vs...)
}

// URL returns the fake's base URL (http://127.0.0.1:PORT), the value for
// twilio.Config.APIURL.
func (s *Server) URL() string { return s.srv.URL }

// Messages returns a copy of the accepted messages, in the order they were accepted.
// Sends that failed (injected, invalid or unauthorised) are not in it.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = m.clone()
	}
	return out
}

// MessagesTo returns the accepted messages whose To is to.
func (s *Server) MessagesTo(to string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.To == to {
			out = append(out, m.clone())
		}
	}
	return out
}

// Count returns the number of accepted messages.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.messages)
}

// Attempts returns the number of authenticated POSTs to the Messages resource, accepted
// or failed (injected or invalid), so tests can count retries.
func (s *Server) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// FailNumber makes every send to the number to fail with Twilio's error code and the
// HTTP status (400 when status is 0), until Reset; for example 21610, 400 for a
// recipient who replied STOP.
func (s *Server) FailNumber(to string, code, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNumber[to] = failure{code: code, status: cmp.Or(status, http.StatusBadRequest)}
}

// FailNext makes the next n sends fail with Twilio's error code and the HTTP status (500
// when status is 0), whatever their number; for example 20500, 500 for a transient
// error. It takes precedence over FailNumber and adds to earlier FailNext calls.
func (s *Server) FailNext(n int, code, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failNext = append(s.failNext, failure{code: code, status: cmp.Or(status, http.StatusInternalServerError)})
	}
}

// Delay makes every following request wait d before it is handled (0 turns it off). A
// client that gives up during the wait gets no answer and its message is not recorded.
func (s *Server) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Hold makes every following request wait until release is called, so a test can act
// while texts are in flight at a known point. Held tells how many are waiting.
func (s *Server) Hold() (release func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.gate = gate
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.gate == gate {
				s.gate = nil
			}
			s.mu.Unlock()
			close(gate)
		})
	}
}

// Held is how many requests are waiting for a Hold's release.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// Reset forgets the recorded messages, attempts and callbacks, every injected failure
// and delay, and turns AutoReport off. It keeps the violations.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = nil
	s.attempts = 0
	s.failNumber = make(map[string]failure)
	s.failNext = nil
	s.delay = 0
	s.autoReport = false
	s.undelivered = make(map[string]int)
	s.callbacks = nil
}

// Callback is one status callback the fake made.
type Callback struct {
	// SID is the message reported on.
	SID string
	// Status is the MessageStatus sent; ErrorCode the ErrorCode (0 when not sent).
	Status    string
	ErrorCode int
	// URL is the message's StatusCallback, where the report went.
	URL string
	// Form is the form posted, and Signature its X-Twilio-Signature.
	Form      url.Values
	Signature string
	// Answer is the HTTP status the receiver answered with; 0 when no answer came.
	Answer int
	// Err is why no answer came (the request failed); nil otherwise.
	Err error
}

// ErrNoCallback is returned by Report for a message that is unknown or was sent without
// a StatusCallback.
var ErrNoCallback = errors.New("twiliofake: no such message with a status callback")

// Report posts a status callback for the accepted message sid to its StatusCallback URL,
// as Twilio does: a form with MessageSid, MessageStatus (status, such as "sent",
// "delivered", "undelivered" or "failed"), ErrorCode (when errorCode is not 0), To, From,
// AccountSid and ApiVersion (with their older Sms* twins), signed with the fake's auth
// token in X-Twilio-Signature. It returns the receiver's HTTP status; the error is
// ErrNoCallback, or why the request failed. Every attempt is recorded (Callbacks).
func (s *Server) Report(ctx context.Context, sid, status string, errorCode int) (int, error) {
	s.mu.Lock()
	var m *Message
	for i := range s.messages {
		if s.messages[i].SID == sid {
			m = &s.messages[i]
			break
		}
	}
	var msg Message
	if m != nil {
		msg = m.clone()
	}
	s.mu.Unlock()
	if m == nil || msg.StatusCallback == "" {
		return 0, fmt.Errorf("%w: %q", ErrNoCallback, sid)
	}
	if status == "" {
		return 0, errors.New("twiliofake: report: status is empty")
	}
	cb := s.post(ctx, msg, status, errorCode)
	return cb.Answer, cb.Err
}

// post makes and records one status callback for m.
func (s *Server) post(ctx context.Context, m Message, status string, errorCode int) Callback {
	form := url.Values{
		"AccountSid":    {m.AccountSID},
		"ApiVersion":    {"2010-04-01"},
		"MessageSid":    {m.SID},
		"SmsSid":        {m.SID},
		"MessageStatus": {status},
		"SmsStatus":     {status},
		"To":            {m.To},
	}
	if from := cmp.Or(m.From, m.sender); from != "" {
		form.Set("From", from)
	}
	if m.MessagingServiceSID != "" {
		form.Set("MessagingServiceSid", m.MessagingServiceSID)
	}
	if errorCode != 0 {
		form.Set("ErrorCode", strconv.Itoa(errorCode))
	}
	cb := Callback{SID: m.SID, Status: status, ErrorCode: errorCode, URL: m.StatusCallback, Form: form,
		Signature: twilio.Signature(s.token, m.StatusCallback, form)}
	// Sent all the same: a test may want to see what the receiver makes of it.
	s.violate(s.contract.CheckStatusCallback(form)...)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.StatusCallback, strings.NewReader(form.Encode()))
	if err == nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", cb.Signature)
		req.Header.Set("User-Agent", "TwilioProxy/1.1")
		var res *http.Response
		if res, err = s.client.Do(req); err == nil {
			cb.Answer = res.StatusCode
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
			_ = res.Body.Close()
		}
	}
	cb.Err = err
	s.mu.Lock()
	s.callbacks = append(s.callbacks, cb)
	s.mu.Unlock()
	return cb
}

// Callbacks returns a copy of the status callbacks made so far (by Report and by
// AutoReport), in the order they finished.
func (s *Server) Callbacks() []Callback {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Callback, len(s.callbacks))
	for i, cb := range s.callbacks {
		cb.Form = Message{Form: cb.Form}.clone().Form
		out[i] = cb
	}
	return out
}

// AutoReport turns automatic status callbacks on or off. While on, every message
// accepted with a StatusCallback gets two reports once its create answer has been
// written, in order: "sent", then "delivered", or "undelivered" with the code given to
// UndeliverNumber for its To. As with Twilio, they may reach the receiver before the
// sender has stored the message's sid. Use Callbacks to see them (with require.Eventually).
func (s *Server) AutoReport(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoReport = on
}

// UndeliverNumber makes AutoReport report every later message to the number to as
// "undelivered" with Twilio's error code (30003 for a handset that is off, 30005 for
// an unknown number, 21610 for a carrier opt-out), until Reset.
func (s *Server) UndeliverNumber(to string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.undelivered[to] = code
}

// autoReportMessage posts m's automatic reports in the background, unless AutoReport is off,
// m has no StatusCallback or the fake is closing.
func (s *Server) autoReportMessage(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.autoReport || s.closed || m.StatusCallback == "" {
		return
	}
	final, code := "delivered", 0
	if c, ok := s.undelivered[m.To]; ok {
		final, code = "undelivered", c
	}
	s.reporting.Add(1)
	go func() {
		defer s.reporting.Done()
		if cb := s.post(s.ctx, m, "sent", 0); cb.Err != nil && s.ctx.Err() != nil {
			return // closing
		}
		s.post(s.ctx, m, final, code)
	}()
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delay, gate := s.delay, s.gate
	if gate != nil {
		s.held++
	}
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
		case <-s.done:
		}
		s.mu.Lock()
		s.held--
		s.mu.Unlock()
		if r.Context().Err() != nil {
			return
		}
		select {
		case <-s.done:
			return
		default:
		}
	}
	if delay > 0 {
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}

	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.write(w, &call{r: r}, errorAnswer(http.StatusBadRequest, 20001, "Could not read the request body"))
		return
	}
	match, violations := s.contract.CheckRequest(r, body)
	s.violate(violations...)
	c := &call{r: r, match: match, body: body, violations: violations}
	a := s.handle(c)
	s.write(w, c, a)
	if a.accepted != nil {
		if f, ok := w.(http.Flusher); ok {
			f.Flush() // the sender has its answer before any report starts
		}
		s.autoReportMessage(a.accepted.clone())
	}
}

// call is one request to the fake, read and checked against the contract.
type call struct {
	r     *http.Request
	match *Match // nil when Twilio has no such operation
	body  []byte
	// violations are how the request broke the contract: after its own checks (which
	// give Twilio's error codes), a handler refuses such a request with refuse.
	violations []Violation
}

// answer is what the fake answers a call with.
type answer struct {
	status int
	body   any
	// accepted is the message a Messages create accepted, for AutoReport.
	accepted *Message
}

func errorAnswer(status, code int, message string) answer {
	return answer{status: status, body: map[string]any{
		"code":      code,
		"message":   message,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code),
		"status":    status,
	}}
}

// refuse is the answer to a request that broke Twilio's contract but passed the
// handler's own checks: the 400 Twilio gives a parameter it cannot take.
func refuse(c *call) answer {
	more := ""
	if n := len(c.violations); n > 1 {
		more = fmt.Sprintf(" (and %d more)", n-1)
	}
	return errorAnswer(http.StatusBadRequest, 20001,
		"twiliofake: the request breaks Twilio's API contract for "+c.match.Operation+": "+c.violations[0].Problem+more)
}

// handlers serve Twilio's operations by operationId. An operation of the documents that is
// not here is answered 404 and recorded as a violation: a test relying on it would see
// an answer Twilio does not give.
var handlers = map[string]func(*Server, *call) answer{
	"CreateMessage": (*Server).createMessage,
	// A shop's own sender (sender.go).
	"ListAvailablePhoneNumberLocal":         (*Server).listAvailableLocal,
	"ListIncomingPhoneNumber":               (*Server).listIncomingNumbers,
	"CreateIncomingPhoneNumber":             (*Server).createIncomingNumber,
	"CreateService":                         (*Server).createService,
	"ListService":                           (*Server).listServices,
	"CreatePhoneNumber":                     (*Server).createServiceNumber,
	"ListPhoneNumber":                       (*Server).listServiceNumbers,
	"CreateCustomerProfile":                 createBundle("customer_profile"),
	"UpdateCustomerProfile":                 updateBundle("customer_profile"),
	"CreateTrustProduct":                    createBundle("trust_product"),
	"UpdateTrustProduct":                    updateBundle("trust_product"),
	"CreateEndUser":                         (*Server).createEndUser,
	"CreateSupportingDocument":              (*Server).createDocument,
	"CreateAddress":                         (*Server).createAddress,
	"CreateCustomerProfileEntityAssignment": createAssignment("customer_profile", "CustomerProfileSid"),
	"CreateTrustProductEntityAssignment":    createAssignment("trust_product", "TrustProductSid"),
	"CreateCustomerProfileEvaluation":       createEvaluation("customer_profile", "CustomerProfileSid"),
	"CreateTrustProductEvaluation":          createEvaluation("trust_product", "TrustProductSid"),
	"CreateBrandRegistrations":              (*Server).createBrand,
	"FetchBrandRegistrations":               (*Server).fetchBrand,
	"ListBrandRegistrations":                (*Server).listBrands,
	"CreateUsAppToPerson":                   (*Server).createCampaign,
	"FetchUsAppToPerson":                    (*Server).fetchCampaign,
	"ListUsAppToPerson":                     (*Server).listCampaigns,
	"DeleteUsAppToPerson":                   (*Server).deleteCampaign,
}

// handle checks credentials, then gives the call to its operation's handler.
func (s *Server) handle(c *call) answer {
	notFound := errorAnswer(http.StatusNotFound, 20404, "The requested resource "+c.r.URL.Path+" was not found")
	user, pass, ok := c.r.BasicAuth()
	if !ok || !equal(user, s.sid) || !equal(pass, s.token) {
		return errorAnswer(http.StatusUnauthorized, 20003, "Authenticate")
	}
	if c.match == nil {
		return notFound
	}
	h, ok := handlers[c.match.Operation]
	if !ok {
		s.violate(Violation{Operation: c.match.Operation, Where: "request",
			Problem: "twiliofake does not serve this operation of Twilio's yet (add it to handlers)"})
		return notFound
	}
	if account, ok := c.match.PathParams["AccountSid"]; ok && account != s.sid {
		// Twilio answers a request for another account's resources as not found.
		return notFound
	}
	return h(s, c)
}

// write answers c with a's JSON body, after checking it against the contract.
func (s *Server) write(w http.ResponseWriter, c *call, a answer) {
	if a.status == http.StatusNoContent {
		if c.match != nil {
			s.violate(s.contract.CheckAnswer(c.match, a.status, w.Header(), nil)...)
		}
		w.WriteHeader(a.status)
		return
	}
	b, err := json.Marshal(a.body)
	if err != nil {
		panic(fmt.Sprintf("twiliofake: encode answer: %v", err)) // the fake's own bug
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch {
	case c.match != nil:
		s.violate(s.contract.CheckAnswer(c.match, a.status, w.Header(), b)...)
	case a.status < 200 || a.status > 299: // a 404, held to Twilio's error body
		s.violate(s.contract.CheckAnswer(&Match{Operation: c.r.Method + " " + c.r.URL.Path}, a.status, w.Header(), b)...)
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(b)
}

// createMessage is CreateMessage (POST /2010-04-01/Accounts/{AccountSid}/Messages.json).
func (s *Server) createMessage(c *call) answer {
	f, err := url.ParseQuery(string(c.body))
	if err != nil {
		return errorAnswer(http.StatusBadRequest, 20001, "Could not parse the request body")
	}

	s.mu.Lock()
	s.attempts++
	var fail *failure
	if len(s.failNext) > 0 {
		fail = &s.failNext[0]
		s.failNext = s.failNext[1:]
	} else if fn, ok := s.failNumber[f.Get("To")]; ok {
		fail = &fn
	}
	s.mu.Unlock()
	if fail != nil {
		return errorAnswer(fail.status, fail.code, errorMessage(fail.code))
	}

	m, status, code, msg := s.parse(c.match.PathParams["AccountSid"], f)
	if code != 0 {
		return errorAnswer(status, code, msg)
	}
	if len(c.violations) > 0 {
		return refuse(c)
	}

	if m.MessagingServiceSID != "" {
		m.sender = s.acct().serviceNumber(m.MessagingServiceSID)
	}
	s.mu.Lock()
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	return answer{status: http.StatusCreated, body: messageJSON(m), accepted: &m}
}

// parse checks the form as Twilio does for the fields the fake knows, and builds the
// Message; a non-zero code is the Twilio error to answer with.
func (s *Server) parse(account string, f url.Values) (m Message, status, code int, msg string) {
	m = Message{
		SID:                 "SM" + randomHex(16),
		AccountSID:          account,
		From:                f.Get("From"),
		To:                  f.Get("To"),
		Body:                f.Get("Body"),
		MessagingServiceSID: f.Get("MessagingServiceSid"),
		StatusCallback:      f.Get("StatusCallback"),
		Form:                f,
		DateCreated:         time.Now().UTC().Truncate(time.Second),
	}
	switch {
	case m.To == "":
		return m, http.StatusBadRequest, 21604, "A 'To' phone number is required."
	case !phone.Valid(m.To):
		return m, http.StatusBadRequest, 21211, "Invalid 'To' Phone Number: " + m.To
	case m.From == "" && m.MessagingServiceSID == "":
		return m, http.StatusBadRequest, 21603, "A 'From' phone number is required."
	case m.Body == "" && len(f["MediaUrl"]) == 0 && f.Get("ContentSid") == "":
		return m, http.StatusBadRequest, 21602, "Message body is required."
	}
	if cb := m.StatusCallback; cb != "" {
		if u, err := url.Parse(cb); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return m, http.StatusBadRequest, 21609, "Invalid StatusCallback url"
		}
	}
	if v := f.Get("ValidityPeriod"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 36000 {
			return m, http.StatusBadRequest, 90007, "Invalid validity period value"
		}
		m.ValidityPeriod = time.Duration(n) * time.Second
	}
	return m, 0, 0, ""
}

// messageJSON is the Message resource as Twilio answers a create.
func messageJSON(m Message) map[string]any {
	created := m.DateCreated.Format(time.RFC1123Z)
	status := "queued"
	var service any
	if m.MessagingServiceSID != "" {
		status = "accepted" // Twilio's answer when a Messaging Service picks the sender
		service = m.MessagingServiceSID
	}
	var from any = m.From
	if m.From == "" {
		from = nil
	}
	uri := "/2010-04-01/Accounts/" + m.AccountSID + "/Messages/" + m.SID
	return map[string]any{
		"account_sid":           m.AccountSID,
		"api_version":           "2010-04-01",
		"body":                  m.Body,
		"date_created":          created,
		"date_sent":             nil,
		"date_updated":          created,
		"direction":             "outbound-api",
		"error_code":            nil,
		"error_message":         nil,
		"from":                  from,
		"messaging_service_sid": service,
		"num_media":             "0",
		"num_segments":          strconv.Itoa(sms.Segments(m.Body)),
		"price":                 nil,
		"price_unit":            "USD",
		"sid":                   m.SID,
		"status":                status,
		"subresource_uris":      map[string]string{"media": uri + "/Media.json"},
		"to":                    m.To,
		"uri":                   uri + ".json",
	}
}

// errorMessage gives injected failures Twilio's wording for the codes tests use.
func errorMessage(code int) string {
	switch code {
	case 20429:
		return "Too Many Requests"
	case 20500:
		return "An internal server error has occurred"
	case 21211:
		return "Invalid 'To' Phone Number"
	case 21408:
		return "Permission to send an SMS has not been enabled for the region indicated by the 'To' number"
	case 21610:
		return "Attempt to send to unsubscribed recipient"
	case 21612:
		return "The 'To' phone number is not currently reachable via SMS"
	case 21614:
		return "'To' number is not a valid mobile number"
	}
	return "Error " + strconv.Itoa(code)
}

func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}

// CheckCallback holds a status callback form made outside the fake (the load kit's
// reports on the action URLs of TwiML answers, which Twilio sends as it sends status
// callbacks) to Twilio's contract, recording what breaks it (Violations).
func (s *Server) CheckCallback(form url.Values) {
	s.violate(s.contract.CheckStatusCallback(form)...)
}
