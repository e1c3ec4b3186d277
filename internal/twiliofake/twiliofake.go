// Package twiliofake is a local stand-in for Twilio's REST Messages API, for tests
// (Twilio ships no local server). It serves
// POST /2010-04-01/Accounts/{AccountSid}/Messages.json on an httptest.Server with HTTP
// basic auth, records the messages it accepts, answers with Twilio-shaped JSON, and can
// be told to fail or to be slow. Point the sender at it with twilio.Config.APIURL (or
// TWILIO_API_URL) set to URL().
//
// A Server is safe for concurrent use.
package twiliofake

import (
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
)

// Default credentials used by New. Both are alphanumeric, as twilio-go requires.
const (
	// TestAccountSID is the account SID New accepts: "AC" and 32 characters, as in Twilio.
	TestAccountSID = "ACtest0123456789abcdef0123456789ab"
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
	// Form holds every form field as received.
	Form url.Values
	// DateCreated is when the fake accepted the message.
	DateCreated time.Time
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

	mu         sync.Mutex
	messages   []Message
	attempts   int
	failNumber map[string]failure
	failNext   []failure
	delay      time.Duration
}

// New starts a fake that accepts TestAccountSID and TestAuthToken. It is closed when
// the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	return NewWithCreds(t, TestAccountSID, TestAuthToken)
}

// NewWithCreds starts a fake that accepts only the given account SID and auth token.
// It is closed when the test ends.
func NewWithCreds(t testing.TB, sid, token string) *Server {
	t.Helper()
	s := &Server{
		sid:        sid,
		token:      token,
		done:       make(chan struct{}),
		failNumber: make(map[string]failure),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
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

// Reset forgets the recorded messages and attempts, and every injected failure and delay.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = nil
	s.attempts = 0
	s.failNumber = make(map[string]failure)
	s.failNext = nil
	s.delay = 0
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()
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

	user, pass, ok := r.BasicAuth()
	if !ok || !equal(user, s.sid) || !equal(pass, s.token) {
		writeError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	}
	account, ok := messagesPath(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	}
	if account != s.sid {
		// Twilio answers a request for another account's resources as not found.
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, 20004, "Method not allowed")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, 20001, "Could not parse the request body")
		return
	}
	f := r.PostForm

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
		writeError(w, fail.status, fail.code, errorMessage(fail.code))
		return
	}

	m, status, code, msg := s.parse(account, f)
	if code != 0 {
		writeError(w, status, code, msg)
		return
	}

	s.mu.Lock()
	s.messages = append(s.messages, m)
	s.mu.Unlock()

	writeJSON(w, http.StatusCreated, messageJSON(m))
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
	if v := f.Get("ValidityPeriod"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 36000 {
			return m, http.StatusBadRequest, 90007, "Invalid validity period value"
		}
		m.ValidityPeriod = time.Duration(n) * time.Second
	}
	return m, 0, 0, ""
}

// messagesPath extracts the account SID from /2010-04-01/Accounts/{sid}/Messages.json.
func messagesPath(p string) (account string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/2010-04-01/Accounts/")
	if !ok {
		return "", false
	}
	account, ok = strings.CutSuffix(rest, "/Messages.json")
	if !ok || account == "" || strings.Contains(account, "/") {
		return "", false
	}
	return account, true
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

// writeError answers with Twilio's error body.
func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{
		"code":      code,
		"message":   message,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code),
		"status":    status,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}
