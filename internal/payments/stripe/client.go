package stripe

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	stripego "github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"

	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// DefaultTimeout bounds each Stripe API call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

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
		return nil, fmt.Errorf("%w: stripe secret key is required", payments.ErrInvalid)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: negative stripe timeout %s", payments.ErrInvalid, cfg.Timeout)
	}
	if cfg.MaxNetworkRetries < 0 {
		return nil, fmt.Errorf("%w: negative stripe max network retries %d", payments.ErrInvalid, cfg.MaxNetworkRetries)
	}
	if cfg.APIURL != "" {
		u, err := url.Parse(cfg.APIURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: stripe api url %q is not an absolute http(s) url", payments.ErrInvalid, cfg.APIURL)
		}
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	// The winners of a storm ask for their links at once; the default of 2 idle
	// connections per host closed all but two of the connections they opened, so the
	// next storm's winners each dialled (and handshook TLS) anew on their way to an
	// answer. HTTP/2 to Stripe shares one connection anyway; a Stripe reached over
	// HTTP/1.1 (stripe-mock, a proxy) keeps up to this many.
	tr.MaxIdleConnsPerHost = 32
	httpClient := &http.Client{Timeout: cmp.Or(cfg.Timeout, DefaultTimeout), Transport: tr}
	backend := func(typ stripego.SupportedBackend) stripego.Backend {
		// GetBackendWithConfig fills in and keeps the config it is given, so
		// each backend gets a fresh one.
		bc := &stripego.BackendConfig{
			HTTPClient:        httpClient,
			MaxNetworkRetries: stripego.Int64(cfg.MaxNetworkRetries),
			// The library logs errors to stderr by default; we return them.
			LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull},
		}
		if cfg.APIURL != "" {
			bc.URL = stripego.String(cfg.APIURL)
		}
		return stripego.GetBackendWithConfig(typ, bc)
	}
	api := client.New(cfg.SecretKey, &stripego.Backends{
		API:     backend(stripego.APIBackend),
		Connect: backend(stripego.ConnectBackend),
		Uploads: backend(stripego.UploadsBackend),
	})
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Client{api: api, now: now}, nil
}

// translate turns a *stripe.Error into a *payments.Error, deciding there whether a
// retry can help and whether Stripe has no such object, and leaves anything else
// (network errors, context errors) alone: payments.Transient calls those transient.
func translate(err error) error {
	var se *stripego.Error
	if !errors.As(err, &se) {
		return err
	}
	shouldRetry := ""
	if se.LastResponse != nil {
		shouldRetry = se.LastResponse.Header.Get("Stripe-Should-Retry")
	}
	return &payments.Error{
		Provider:  "stripe",
		Type:      string(se.Type),
		Code:      string(se.Code),
		Status:    se.HTTPStatusCode,
		Msg:       se.Msg,
		RequestID: se.RequestID,
		NotFound:  se.Code == stripego.ErrorCodeResourceMissing,
		Transient: transient(se, shouldRetry),
		Err:       se,
	}
}

// transient decides whether retrying a call Stripe answered with se, with the same
// arguments and so the same idempotency key, may succeed.
//
// It is true for Stripe's 409 (a concurrent request with the same idempotency key),
// 429 (rate limit, lock_timeout) and 5xx answers, and false for resource_missing and
// Stripe's other 4xx answers (card_error, invalid_request_error, idempotency_error for
// a key reused with different parameters), unless Stripe's Stripe-Should-Retry header
// (shouldRetry: "true", "false" or empty) says otherwise.
//
// Stripe stores the first answer to an idempotent POST, a 500 included, and replays it
// for 24 hours; a 500 on a create is therefore rare but sticky.
func transient(se *stripego.Error, shouldRetry string) bool {
	if se.Code == stripego.ErrorCodeResourceMissing {
		// payments.Transient has always said no to payments.ErrNotFound, whatever the header.
		return false
	}
	switch shouldRetry {
	case "true":
		return true
	case "false":
		return false
	}
	return se.HTTPStatusCode >= 500 ||
		se.HTTPStatusCode == http.StatusTooManyRequests ||
		se.HTTPStatusCode == http.StatusConflict ||
		se.Code == stripego.ErrorCodeLockTimeout ||
		se.Type == stripego.ErrorTypeAPI
}
