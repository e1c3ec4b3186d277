package twilio

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/slotrecovery/slotrecovery/internal/phone"
	"github.com/slotrecovery/slotrecovery/internal/sms"
)

// DefaultTimeout bounds one call to Twilio when Config.Timeout is zero. It is twilio-go's
// own default, which a custom HTTP client would otherwise lose.
const DefaultTimeout = 10 * time.Second

// Config configures a Twilio sender. Zero optional fields mean "use the default".
type Config struct {
	// AccountSID is the Twilio account SID (AC…). Required.
	AccountSID string
	// AuthToken is the account's auth token. Required.
	AuthToken string
	// APIURL optionally replaces https://api.twilio.com, for a proxy or a local fake
	// (http://127.0.0.1:PORT). Its path, if any, is prefixed to Twilio's paths.
	APIURL string
	// Timeout bounds each call to Twilio, on top of the caller's context. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// StatusCallbackURL, when set, is sent as every message's StatusCallback: Twilio then
	// posts the message's delivery status (sent, delivered, undelivered, failed) to it,
	// signed like any webhook. It must be the absolute URL Twilio can reach, the server's
	// PUBLIC_URL followed by the status route's path, exactly as the handler rebuilds it
	// to check the signature. Empty means no status callbacks.
	StatusCallbackURL string
	// PrimaryProfileSID is the platform's own (ISV) primary customer profile (BU…),
	// assigned to each company's secondary profile in an A2P registration; empty leaves
	// it out (Twilio then asks for it in review).
	PrimaryProfileSID string
}

// alphanumeric is what twilio-go accepts as basic-auth user and password; checking it
// here turns a bad credential into a start-up error instead of a failed send.
var alphanumeric = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// Sender sends texts through Twilio's Messages API. It is safe for concurrent use.
type Sender struct {
	sid, token   string
	timeout      time.Duration
	callback     string            // StatusCallback of every message; "" for none
	base         *url.URL          // nil: leave twilio-go's URL alone
	transport    http.RoundTripper // shared, so connections are pooled across calls
	edge, region string            // twilio-go's TWILIO_EDGE/TWILIO_REGION, read once by twilio-go
	primary      string            // Config.PrimaryProfileSID
}

// New checks cfg and returns a sender. It makes no network call.
func New(cfg Config) (*Sender, error) {
	if cfg.AccountSID == "" {
		return nil, errors.New("new twilio sender: account sid is required")
	}
	if cfg.AuthToken == "" {
		return nil, errors.New("new twilio sender: auth token is required")
	}
	if !alphanumeric.MatchString(cfg.AccountSID) {
		return nil, errors.New("new twilio sender: account sid must be alphanumeric")
	}
	if !alphanumeric.MatchString(cfg.AuthToken) {
		return nil, errors.New("new twilio sender: auth token must be alphanumeric")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("new twilio sender: timeout %s is negative", cfg.Timeout)
	}
	var base *url.URL
	if cfg.APIURL != "" {
		u, err := url.Parse(cfg.APIURL)
		if err != nil {
			return nil, fmt.Errorf("new twilio sender: parse api url: %w", err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("new twilio sender: api url %q is not an absolute http(s) url", cfg.APIURL)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, errors.New("new twilio sender: api url must not carry user info, a query or a fragment")
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		base = u
	}

	if cfg.StatusCallbackURL != "" {
		u, err := url.Parse(cfg.StatusCallbackURL)
		if err != nil {
			return nil, fmt.Errorf("new twilio sender: parse status callback url: %w", err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("new twilio sender: status callback url %q is not an absolute http(s) url", cfg.StatusCallbackURL)
		}
		if u.User != nil || u.Fragment != "" {
			// Twilio would send the credentials along (or drop the fragment), and the
			// signature would no longer match the URL the handler rebuilds.
			return nil, errors.New("new twilio sender: status callback url must not carry user info or a fragment")
		}
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Offer waves send many texts at once; the default of 2 idle connections per host
	// would make most of them dial (and handshake TLS) anew.
	tr.MaxIdleConnsPerHost = 32

	// NewRequestHandler is where twilio-go reads TWILIO_EDGE and TWILIO_REGION; keep
	// what it found so per-call handlers behave exactly as the library would.
	rh := client.NewRequestHandler(&client.Client{})
	return &Sender{
		sid:       cfg.AccountSID,
		token:     cfg.AuthToken,
		timeout:   cmp.Or(cfg.Timeout, DefaultTimeout),
		callback:  cfg.StatusCallbackURL,
		base:      base,
		transport: tr,
		edge:      rh.Edge,
		region:    rh.Region,
		primary:   cfg.PrimaryProfileSID,
	}, nil
}

// Text sends m and returns Twilio's message SID. Twilio's error answers become *sms.Error
// classified by reason (use sms.ReasonOf, sms.Permanent or sms.AccountProblem to decide
// what to do; the code is detail for logs). When Config.StatusCallbackURL is set, the
// message carries it, and Twilio reports its delivery there.
//
// twilio-go v1.31.0 has no context-aware call (it builds every request with
// context.Background()), so each call gets its own twilio-go client whose RoundTripper
// re-issues the request under ctx: cancelling ctx aborts the HTTP request itself, and no
// goroutine is left waiting. A cancelled or expired ctx is reported as ctx's error,
// wrapped. A failure after the request was written, with no answer from Twilio (a
// timeout, a dropped connection), wraps sms.ErrOutcomeUnknown: the text may have been sent.
// Any other error means it was not.
func (t *Sender) Text(ctx context.Context, m sms.Message) (string, error) {
	if err := m.Validate(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("send sms to %s: %w", phone.Mask(m.To), err)
	}

	params := &openapi.CreateMessageParams{}
	if m.MessagingServiceSID != "" {
		params.SetMessagingServiceSid(m.MessagingServiceSID)
	} else {
		params.SetFrom(m.From)
	}
	params.SetTo(m.To)
	params.SetBody(m.Body)
	if m.ValidityPeriod > 0 {
		params.SetValidityPeriod(sms.ValiditySeconds(m.ValidityPeriod))
	}
	if t.callback != "" {
		params.SetStatusCallback(t.callback)
	}

	var written atomic.Bool
	msg, err := t.api(ctx, &written).CreateMessage(params)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err)
		}
		err = fromTwilio(err)
		var te *sms.Error
		if !errors.As(err, &te) && written.Load() {
			// The request went out and no answer came back: Twilio may have queued the text.
			err = fmt.Errorf("%w: %w", sms.ErrOutcomeUnknown, err)
		}
		return "", fmt.Errorf("send sms to %s: %w", phone.Mask(m.To), err)
	}
	if msg.Sid == nil || *msg.Sid == "" {
		return "", fmt.Errorf("send sms to %s: twilio answered without a message sid", phone.Mask(m.To))
	}
	return *msg.Sid, nil
}

// api builds a twilio-go service bound to ctx. Everything it allocates is small; the
// connection pool lives in t.transport and is shared.
func (t *Sender) api(ctx context.Context, written *atomic.Bool) *openapi.ApiService {
	return openapi.NewApiService(t.handler(ctx, written))
}

// handler is a twilio-go request handler bound to ctx, for any of Twilio's APIs: the
// transport sends the REST API's, Messaging's and TrustHub's requests alike to the
// configured base URL (their paths do not collide).
func (t *Sender) handler(ctx context.Context, written *atomic.Bool) *client.RequestHandler {
	c := &client.Client{
		Credentials: client.NewCredentials(t.sid, t.token),
		// A custom HTTPClient replaces twilio-go's default one, so restore both of its
		// properties: a timeout and never following redirects.
		HTTPClient: &http.Client{
			Transport: &transport{ctx: ctx, base: t.base, next: t.transport, written: written},
			Timeout:   t.timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
	c.SetAccountSid(t.sid)
	return &client.RequestHandler{Client: c, Edge: t.edge, Region: t.region}
}

// transport sends twilio-go's requests under the caller's context and, when base is
// set, to base's scheme and host with base's path prefixed. It lives for one Text call
// only, which is why it may hold a context (as http.Request does).
type transport struct {
	ctx  context.Context
	base *url.URL
	next http.RoundTripper
	// written is set once the whole request has been written to the connection: from
	// then on a failure leaves the outcome unknown.
	written *atomic.Bool
}

// RoundTrip implements http.RoundTripper. It clones the request, as RoundTrippers must
// not modify theirs.
func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := tr.ctx
	if tr.written != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				if info.Err == nil {
					tr.written.Store(true)
				}
			},
		})
	}
	r := req.Clone(ctx)
	if tr.base != nil {
		r.URL.Scheme = tr.base.Scheme
		r.URL.Host = tr.base.Host
		r.URL.Path = tr.base.Path + r.URL.Path
		r.URL.RawPath = ""
		r.Host = "" // the Host header follows the new URL
	}
	return tr.next.RoundTrip(r)
}
