package loadkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Stripe stands in for Stripe's Checkout API: it answers Checkout Session creates at
// once, shaped as Stripe shapes them, and anything else with Stripe's 404 error. It
// keeps no state, so the server's reconciliation finds no session it made.
type Stripe struct {
	srv *http.Server
	// URL is the base URL, the value for STRIPE_API_URL.
	URL string
	// Creates counts the Checkout Sessions made.
	Creates atomic.Int64
}

// StartStripe starts the stand-in on a loopback port.
func StartStripe() (*Stripe, error) {
	f := &Stripe{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f.URL = "http://" + ln.Addr().String()
	f.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/checkout/sessions" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"not in the stand-in"}}`)
			return
		}
		_ = r.ParseForm()
		id := fmt.Sprintf("cs_test_load%024d", f.Creates.Add(1))
		var expires int64
		_, _ = fmt.Sscan(r.PostForm.Get("expires_at"), &expires)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "object": "checkout.session", "url": "https://checkout.stripe.com/c/pay/" + id,
			"expires_at": expires, "status": "open", "payment_status": "unpaid", "mode": "payment",
			"client_reference_id": r.PostForm.Get("client_reference_id"), "payment_intent": nil,
			"amount_total": 4500, "currency": r.PostForm.Get("currency"), "livemode": false,
		})
	})}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// Close stops the stand-in.
func (f *Stripe) Close() { _ = f.srv.Close() }
