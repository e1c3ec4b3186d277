package stripetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one request that reached a Recorder.
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the URL path, e.g. /v1/checkout/sessions.
	Path string
	// Query is the parsed URL query (GET parameters).
	Query url.Values
	// Form is the parsed form body (POST parameters), e.g.
	// Form.Get("metadata[booking_id]").
	Form url.Values
	// IdempotencyKey is the Idempotency-Key header.
	IdempotencyKey string
	// Account is the Stripe-Account header: the connected account the request acts on,
	// "" for the platform's own. stripe-mock accepts the header and ignores it, so this
	// record is the only place a test can see which account a request named.
	Account string
	// Header is a copy of the request headers.
	Header http.Header
	// Status is the status the Recorder answered with; 0 while the request
	// is still being served.
	Status int
}

// ApplicationFee returns the platform's application fee a Checkout Session create asks
// for (payment_intent_data[application_fee_amount]), and whether it asks for one.
func (q Request) ApplicationFee() (int64, bool) {
	v := q.Form.Get("payment_intent_data[application_fee_amount]")
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1, true // present but not a number: a test comparing it fails
	}
	return n, true
}

// RefundsApplicationFee reports whether a refund asks for the platform's application fee
// back too (refund_application_fee=true).
func (q Request) RefundsApplicationFee() bool {
	return q.Form.Get("refund_application_fee") == "true"
}

// canned is a scripted answer.
type canned struct {
	status int
	body   string
}

// Recorder is a reverse proxy in front of stripe-mock (or any upstream) that
// records every request and can answer instead of the upstream: a failure
// for the next n requests (FailNext), a fixed answer for a method and path
// (Respond), or a delay (Delay). Give its URL to stripe.Config.APIURL (internal/payments/stripe).
type Recorder struct {
	// URL is the proxy's base URL.
	URL string

	mu        sync.Mutex
	requests  []Request
	failN     int
	failCode  int
	delay     time.Duration
	responses map[string]canned
	proxy     *httputil.ReverseProxy
	// idem, when not nil, holds the first answer to each (account, Idempotency-Key) of
	// a POST, nil while it is being made (EnforceIdempotency).
	idem map[string]*canned
}

// Stripe's test payment methods that decline when a PaymentIntent is confirmed with
// them, as Stripe's test mode answers (stripe-mock never declines): the cards
// 4000002500003155, 4000000000009995 and 4000000000000002.
const (
	CardAuthenticationRequired = "pm_card_authenticationRequired"
	CardInsufficientFunds      = "pm_card_chargeDeclinedInsufficientFunds"
	CardDeclined               = "pm_card_chargeDeclined"
)

// decline is the answer to a PaymentIntent confirmed with one of the declining test
// cards, and whether it is one.
func decline(req *http.Request, form url.Values) (canned, bool) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/payment_intents" || form.Get("confirm") != "true" {
		return canned{}, false
	}
	code, declineCode, status, msg := "card_declined", "", "requires_payment_method", ""
	switch form.Get("payment_method") {
	case CardAuthenticationRequired:
		code, status, msg = "authentication_required", "requires_action",
			"Your card was declined. This transaction requires authentication."
	case CardInsufficientFunds:
		declineCode, msg = "insufficient_funds", "Your card has insufficient funds."
	case CardDeclined:
		declineCode, msg = "generic_decline", "Your card was declined."
	default:
		return canned{}, false
	}
	amount, _ := strconv.ParseInt(form.Get("amount"), 10, 64)
	pi := map[string]any{"id": fmt.Sprintf("pi_stripetest_%d", time.Now().UnixNano()), "object": "payment_intent",
		"status": status, "amount": amount, "currency": form.Get("currency"), "customer": form.Get("customer"),
		"payment_method": map[string]any{"id": form.Get("payment_method"), "object": "payment_method"}}
	e := map[string]any{"type": "card_error", "code": code, "message": msg, "payment_intent": pi}
	if declineCode != "" {
		e["decline_code"] = declineCode
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return canned{status: http.StatusPaymentRequired, body: string(b)}, true
}

// EnforceIdempotency makes the Recorder keep Stripe's idempotency promise, which
// stripe-mock does not: a later POST with the same Idempotency-Key (on the same
// account) gets the first one's answer again without reaching the upstream, and one
// that comes while the first is still being answered gets Stripe's 409
// idempotency_key_in_use. Like Stripe, it keeps no answer to a request refused as
// invalid (400), in conflict (409) or limited (429).
func (r *Recorder) EnforceIdempotency() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.idem == nil {
		r.idem = map[string]*canned{}
	}
}

// NewRecorder starts a Recorder in front of upstream (a base URL such as
// Mock's) and closes it when the test ends.
func NewRecorder(t testing.TB, upstream string) *Recorder {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil || target.Scheme == "" || target.Host == "" {
		t.Fatalf("stripetest: upstream %q is not an absolute url", upstream)
	}
	r := &Recorder{responses: map[string]canned{}}
	r.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
	}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Requests returns a copy of the requests recorded so far, in arrival order.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Request, len(r.requests))
	copy(out, r.requests)
	return out
}

// Count returns how many recorded requests had the method ("" for any) and
// a path starting with pathPrefix.
func (r *Recorder) Count(method, pathPrefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.requests {
		if (method == "" || q.Method == method) && strings.HasPrefix(q.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// FailNext answers the next n requests with status and a Stripe-shaped
// error body instead of forwarding them. The error's type and code follow
// the status as Stripe's would: 400 invalid_request_error, 402 card_error
// card_declined, 404 resource_missing, 409 idempotency_key_in_use, 429
// rate_limit, 5xx api_error.
func (r *Recorder) FailNext(n int, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failN, r.failCode = n, status
}

// Delay holds every later request for d before answering (0 stops it). A
// client that gives up first sees a timeout.
func (r *Recorder) Delay(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay = d
}

// Respond answers every later request with exactly this method and path
// with status and body (JSON) instead of forwarding it, until replaced by
// another Respond for the same method and path.
func (r *Recorder) Respond(method, path string, status int, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.responses[method+" "+path] = canned{status: status, body: body}
}

// ErrorBody returns a Stripe-shaped error body: {"error":{"type":…}}.
func ErrorBody(typ, code, message string) string {
	e := map[string]string{"type": typ, "message": message}
	if code != "" {
		e["code"] = code
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return string(b)
}

func injectedError(status int) string {
	typ, code := "api_error", ""
	switch {
	case status == http.StatusBadRequest:
		typ, code = "invalid_request_error", "parameter_invalid_empty"
	case status == http.StatusPaymentRequired:
		typ, code = "card_error", "card_declined"
	case status == http.StatusNotFound:
		typ, code = "invalid_request_error", "resource_missing"
	case status == http.StatusConflict:
		typ, code = "idempotency_error", "idempotency_key_in_use"
	case status == http.StatusTooManyRequests:
		typ, code = "invalid_request_error", "rate_limit"
	case status < 500:
		typ = "invalid_request_error"
	}
	return ErrorBody(typ, code, fmt.Sprintf("stripetest: injected %d", status))
}

func (r *Recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "stripetest: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := Request{
		Method:         req.Method,
		Path:           req.URL.Path,
		Query:          req.URL.Query(),
		IdempotencyKey: req.Header.Get("Idempotency-Key"),
		Account:        req.Header.Get("Stripe-Account"),
		Header:         req.Header.Clone(),
	}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		rec.Form, _ = url.ParseQuery(string(body))
	}

	r.mu.Lock()
	idx := len(r.requests)
	r.requests = append(r.requests, rec)
	delay := r.delay
	var answer *canned
	idemKey := ""
	if r.idem != nil && req.Method == http.MethodPost && rec.IdempotencyKey != "" {
		idemKey = rec.Account + " " + rec.IdempotencyKey
		if first, seen := r.idem[idemKey]; seen {
			if first == nil {
				first = &canned{status: http.StatusConflict, body: injectedError(http.StatusConflict)}
			}
			answer, idemKey = first, "" // a replay is not kept again
		} else {
			r.idem[idemKey] = nil
		}
	}
	switch {
	case answer != nil:
	case r.failN > 0:
		r.failN--
		answer = &canned{status: r.failCode, body: injectedError(r.failCode)}
	default:
		if c, ok := r.responses[req.Method+" "+req.URL.Path]; ok {
			answer = &c
		} else if c, ok := decline(req, rec.Form); ok {
			answer = &c
		}
	}
	r.mu.Unlock()

	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if idemKey != "" {
		sw.keep = &bytes.Buffer{}
	}
	defer func() {
		r.mu.Lock()
		r.requests[idx].Status = sw.status
		if idemKey != "" {
			switch sw.status {
			case http.StatusBadRequest, http.StatusConflict, http.StatusTooManyRequests, 499:
				// Stripe keeps no answer to a request that failed validation, clashed with
				// another or was limited; the client went away before anything was made.
				delete(r.idem, idemKey)
			default:
				r.idem[idemKey] = &canned{status: sw.status, body: sw.keep.String()}
			}
		}
		r.mu.Unlock()
	}()

	if delay > 0 && !sleep(req.Context(), delay) {
		sw.status = 499 // the client went away: nginx's "client closed request"
		return
	}
	if answer != nil {
		sw.Header().Set("Content-Type", "application/json")
		sw.Header().Set("Request-Id", "req_stripetest")
		sw.WriteHeader(answer.status)
		_, _ = io.WriteString(sw, answer.body)
		return
	}
	r.proxy.ServeHTTP(sw, req)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	keep   *bytes.Buffer // a copy of the body, when not nil
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.keep != nil {
		w.keep.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
