// Package payments talks to Stripe: it creates and expires the Checkout
// Sessions that collect payment for a booking, reads them back, refunds, and
// verifies and decodes Stripe's webhook events.
//
// Every Stripe object this package creates carries the booking id
// (client_reference_id, metadata.booking_id and the PaymentIntent's
// metadata.booking_id), so webhook handling finds the booking from the
// object itself. Writes use idempotency keys derived from the booking id, so a
// retried job returns the object the first attempt made instead of a second
// one.
//
// The package uses its own stripe-go client and backend per [Client]; it never
// touches stripe-go's global key or backends, and it does not log: errors are
// returned, wrapped, and [Transient] tells a caller whether retrying can help.
package payments

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"
)

// DefaultTimeout bounds each Stripe API call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// ErrInvalid reports a request this package refused before calling Stripe
// (a missing booking id, a non-positive amount, an expiry outside Stripe's
// window). Retrying the same request cannot succeed.
var ErrInvalid = errors.New("payments: invalid request")

// ErrAlreadyCompleted reports that a Checkout Session could not be expired
// because the customer already paid: the booking must stay confirmed.
var ErrAlreadyCompleted = errors.New("payments: checkout session already completed")

// ErrNotFound matches (with errors.Is) an *Error for an object Stripe does not
// have (code resource_missing), e.g. a Checkout Session made with another key
// or account. Asking again cannot find it.
var ErrNotFound = errors.New("payments: no such stripe object")

// Config configures a Client. Zero fields mean "use the default".
type Config struct {
	// SecretKey is the Stripe secret key (sk_live_… or sk_test_…). Required.
	SecretKey string
	// APIURL optionally replaces https://api.stripe.com, e.g. with the
	// address of stripe-mock or a recording proxy.
	APIURL string
	// Timeout bounds each API call; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxNetworkRetries is how often stripe-go itself retries a failed call.
	// The zero default (no retries) is deliberate: callers retry through the
	// job queue, with the same idempotency keys.
	MaxNetworkRetries int64
	// Now is the clock used to check Checkout expiry times; nil means time.Now.
	Now func() time.Time
}

// Client calls the Stripe API with its own key and backend. It is safe for
// concurrent use.
type Client struct {
	api *client.API
	now func() time.Time
}

// New validates cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.SecretKey == "" {
		return nil, fmt.Errorf("%w: stripe secret key is required", ErrInvalid)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: negative stripe timeout %s", ErrInvalid, cfg.Timeout)
	}
	if cfg.MaxNetworkRetries < 0 {
		return nil, fmt.Errorf("%w: negative stripe max network retries %d", ErrInvalid, cfg.MaxNetworkRetries)
	}
	if cfg.APIURL != "" {
		u, err := url.Parse(cfg.APIURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: stripe api url %q is not an absolute http(s) url", ErrInvalid, cfg.APIURL)
		}
	}

	httpClient := &http.Client{Timeout: cmp.Or(cfg.Timeout, DefaultTimeout)}
	backend := func(typ stripe.SupportedBackend) stripe.Backend {
		// GetBackendWithConfig fills in and keeps the config it is given, so
		// each backend gets a fresh one.
		bc := &stripe.BackendConfig{
			HTTPClient:        httpClient,
			MaxNetworkRetries: stripe.Int64(cfg.MaxNetworkRetries),
			// The library logs errors to stderr by default; we return them.
			LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
		}
		if cfg.APIURL != "" {
			bc.URL = stripe.String(cfg.APIURL)
		}
		return stripe.GetBackendWithConfig(typ, bc)
	}
	api := client.New(cfg.SecretKey, &stripe.Backends{
		API:     backend(stripe.APIBackend),
		Connect: backend(stripe.ConnectBackend),
		Uploads: backend(stripe.UploadsBackend),
	})
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Client{api: api, now: now}, nil
}

// Error is an error answered by the Stripe API, translated so that callers
// need not import stripe-go. It unwraps to the *stripe.Error it came from.
type Error struct {
	// Type is Stripe's error type: api_error, card_error, idempotency_error
	// or invalid_request_error.
	Type string
	// Code is Stripe's error code when it gives one, e.g. resource_missing,
	// lock_timeout, rate_limit, idempotency_key_in_use.
	Code string
	// Status is the HTTP status of the answer.
	Status int
	// Msg is Stripe's human-readable message.
	Msg string
	// RequestID is Stripe's request id, for support and the request log.
	RequestID string
	// ShouldRetry is Stripe's Stripe-Should-Retry header ("true", "false" or
	// empty), which overrides the status when Transient decides.
	ShouldRetry string

	err *stripe.Error
}

// Error implements error.
func (e *Error) Error() string {
	s := fmt.Sprintf("stripe %d %s", e.Status, e.Type)
	if e.Code != "" {
		s += "/" + e.Code
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Unwrap returns the underlying *stripe.Error, if any.
func (e *Error) Unwrap() error {
	if e.err == nil {
		// A nil *stripe.Error in an interface is not a nil error: errors.As would
		// match it and hand out a nil pointer.
		return nil
	}
	return e.err
}

// Is makes errors.Is(err, ErrNotFound) true for Stripe's resource_missing.
func (e *Error) Is(target error) bool {
	return target == ErrNotFound && e.Code == string(stripe.ErrorCodeResourceMissing)
}

// transient is Transient's verdict on an answer from Stripe.
func (e *Error) transient() bool {
	switch e.ShouldRetry {
	case "true":
		return true
	case "false":
		return false
	}
	return e.Status >= 500 ||
		e.Status == http.StatusTooManyRequests ||
		e.Status == http.StatusConflict ||
		e.Code == string(stripe.ErrorCodeLockTimeout) ||
		e.Type == string(stripe.ErrorTypeAPI)
}

// translate turns a *stripe.Error into an *Error and leaves anything else
// (network errors, context errors) alone.
func translate(err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return err
	}
	e := &Error{
		Type:      string(se.Type),
		Code:      string(se.Code),
		Status:    se.HTTPStatusCode,
		Msg:       se.Msg,
		RequestID: se.RequestID,
		err:       se,
	}
	if se.LastResponse != nil {
		e.ShouldRetry = se.LastResponse.Header.Get("Stripe-Should-Retry")
	}
	return e
}

// Transient reports whether retrying the failed call later, with the same
// arguments and so the same idempotency key, may succeed.
//
// It is true for network failures, timeouts and cancellations (the outcome is
// unknown, and the idempotency key makes a retry safe), and for Stripe's
// 409 (a concurrent request with the same idempotency key), 429 (rate limit,
// lock_timeout) and 5xx answers, unless Stripe's Stripe-Should-Retry header
// says otherwise. It is false for ErrInvalid, ErrAlreadyCompleted, ErrNotFound and
// Stripe's other 4xx answers (card_error, invalid_request_error,
// idempotency_error for a key reused with different parameters).
//
// Stripe stores the first answer to an idempotent POST, a 500 included, and
// replays it for 24 hours; a 500 on a create is therefore rare but sticky.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrInvalid) || errors.Is(err, ErrAlreadyCompleted) || errors.Is(err, ErrNotFound) {
		return false
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.transient()
	}
	var se *stripe.Error
	if errors.As(err, &se) {
		return translate(se).(*Error).transient()
	}
	// Everything else came from the transport (a refused connection, a
	// timeout, a cancelled context) or from an answer stripe-go could not
	// decode (say, a proxy's HTML 502): the call may or may not have reached
	// Stripe, and a retry with the same idempotency key is safe.
	return true
}
