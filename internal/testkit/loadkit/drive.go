package loadkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// Driver speaks to the server as its clients do: the shop API with bearer keys, and
// inbound texts signed with the Twilio auth token the server was given.
type Driver struct {
	Client *http.Client
	// AccountSID and AuthToken are the Twilio credentials the server checks texts with.
	AccountSID, AuthToken string
	// seq numbers shops' SMS numbers, customers' phones and MessageSids.
	seq atomic.Int64
}

// NewClient is an HTTP client fit for storms: many idle connections per host.
func NewClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 4096, MaxIdleConnsPerHost: 2048, IdleConnTimeout: time.Minute,
	}}
}

// Next returns the next number of the run's sequence.
func (d *Driver) Next() int64 { return d.seq.Add(1) }

// Reserve returns the first of n consecutive numbers of the sequence.
func (d *Driver) Reserve(n int) int64 { return d.seq.Add(int64(n)) - int64(n) + 1 }

// APIError is an answer of the API other than 2xx.
type APIError struct {
	Status int
	Body   string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Body) }

// API calls a JSON endpoint at base with the bearer token; body is sent as JSON (or as
// is, when it is a []byte, with contentType) and a 2xx answer is decoded into out.
func (d *Driver) API(ctx context.Context, base, method, path, token, contentType string, body, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd, contentType = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := d.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %w", method, path, &APIError{Status: res.StatusCode, Body: string(b)})
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Shop is a shop the driver created.
type Shop struct {
	ID        string `json:"id"`
	APIKey    string `json:"api_key"`
	SMSNumber string `json:"sms_number"`
}

// NewShop creates a shop that takes payments and texts waves of waveSize, ten minutes
// apart (in a run, the first wave is the one that counts), at 1,000 texts a second.
func (d *Driver) NewShop(ctx context.Context, base string, waveSize int) (Shop, error) {
	return d.NewShopWith(ctx, base, waveSize, 1000)
}

// NewShopWith is NewShop for a shop whose number sends sendRate texts a second (1: a
// long code).
func (d *Driver) NewShopWith(ctx context.Context, base string, waveSize, sendRate int) (Shop, error) {
	var s Shop
	err := d.API(ctx, base, http.MethodPost, "/api/shops", AdminToken, "", map[string]any{
		"name": "Joe's Barbers", "timezone": "America/New_York", "sms_number": fmt.Sprintf("+1555%07d", d.Next()),
		"currency": "usd", "payment_mode": "checkout",
		"offer_policy": map[string]any{"wave_size": waveSize, "wave_interval_seconds": 600, "min_lead_minutes": 30, "cooldown_seconds": 86400, "quiet_hours": nil,
			"send_rate_per_second": sendRate},
	}, &s)
	return s, err
}

// Phones returns n new customer phones, distinct across the run.
func (d *Driver) Phones(n int) []string {
	first := d.Reserve(n)
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("+1666%08d", first+int64(i))
	}
	return out
}

// Import adds the phones as opted-in customers of the shop through the CSV import.
func (d *Driver) Import(ctx context.Context, base string, shop Shop, phones []string) error {
	var b strings.Builder
	b.WriteString("phone,name,sms_opt_in\n")
	for i, p := range phones {
		fmt.Fprintf(&b, "%s,Soak %d,yes\n", p, i+1)
	}
	var rep struct {
		Created, Updated, Unchanged, Rejected int
	}
	if err := d.API(ctx, base, http.MethodPost, "/api/customers/import", shop.APIKey, "text/csv", []byte(b.String()), &rep); err != nil {
		return err
	}
	if got := rep.Created + rep.Updated + rep.Unchanged; got != len(phones) || rep.Rejected > 0 {
		return fmt.Errorf("import: %d of %d customers in, %d rejected", got, len(phones), rep.Rejected)
	}
	return nil
}

// NewOpening declares an opening of the shop about three hours ahead (the seconds vary,
// so the shop's openings never share a start) and returns its id.
func (d *Driver) NewOpening(ctx context.Context, base string, shop Shop) (string, error) {
	var o struct {
		ID string `json:"id"`
	}
	at := time.Now().Add(3*time.Hour + time.Duration(d.Next()%600)*time.Second).UTC().Truncate(time.Second)
	err := d.API(ctx, base, http.MethodPost, "/api/openings", shop.APIKey, "", map[string]any{
		"starts_at": at.Format(time.RFC3339), "duration_minutes": 30, "service": "Haircut", "price_cents": 4500,
	}, &o)
	return o.ID, err
}

// Yes is an inbound "YES" from a customer's phone to a shop's number, with a new
// MessageSid.
func (d *Driver) Yes(from, to string) url.Values {
	return url.Values{
		"MessageSid": {fmt.Sprintf("SM%032d", d.Next())}, "AccountSid": {d.AccountSID},
		"From": {from}, "To": {to}, "Body": {"YES"}, "NumMedia": {"0"}, "NumSegments": {"1"},
	}
}

// Answer is what became of one inbound text sent by Fire.
type Answer struct {
	// Outcome is the X-Slot-Outcome header, "http_<status>" for an answer other than
	// 200, or "error" when no answer came (Err says why).
	Outcome string
	Err     error
	// Latency is the time to the answer (0 without one).
	Latency time.Duration
	// Base is the instance that last got the request.
	Base string
}

// Fire sends the texts, signed, round robin over bases, inFlight at a time, and returns
// what became of each and the wall time to the last answer. With failOver, a text that
// cannot connect to its instance (never sent: the instance is down) goes to the next
// one, as a load balancer would send it; an error after the request left is final.
func (d *Driver) Fire(ctx context.Context, bases []string, texts []url.Values, inFlight int, failOver bool) ([]Answer, time.Duration) {
	bodies := make([]string, len(texts))
	sigs := make([]string, len(texts))
	for i, f := range texts {
		bodies[i], sigs[i] = f.Encode(), twilio.Signature(d.AuthToken, PublicURL+TwilioPath, f)
	}
	out := make([]Answer, len(texts))
	var next atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range min(inFlight, len(texts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				i := int(next.Add(1) - 1)
				if i >= len(texts) || ctx.Err() != nil {
					return
				}
				tries := 1
				if failOver {
					tries = len(bases)
				}
				for k := range tries {
					out[i] = d.send(ctx, bases[(i+k)%len(bases)], bodies[i], sigs[i])
					if out[i].Err == nil || !NotSent(out[i].Err) {
						break
					}
				}
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	return out, time.Since(t0)
}

// FireAt sends the texts, signed, round robin over bases, at perSecond texts a second
// whatever the answers' pace (an open loop: text i leaves at i/perSecond after the
// start, or as soon as fewer than maxInFlight are in flight), and returns what became
// of each and the wall time to the last answer. A server that slows down meets the
// same offered load, as it would from real customers, and its latencies show it.
func (d *Driver) FireAt(ctx context.Context, bases []string, texts []url.Values, perSecond float64, maxInFlight int) ([]Answer, time.Duration) {
	out := make([]Answer, len(texts))
	if len(texts) == 0 || perSecond <= 0 {
		return out, 0
	}
	sem := make(chan struct{}, max(maxInFlight, 1))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, f := range texts {
		at := t0.Add(time.Duration(float64(i) / perSecond * float64(time.Second)))
		if wait := time.Until(at); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			out[i] = Answer{Outcome: "error", Err: ctx.Err()}
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			body := f.Encode()
			out[i] = d.send(ctx, bases[i%len(bases)], body, twilio.Signature(d.AuthToken, PublicURL+TwilioPath, f))
		}()
	}
	wg.Wait()
	return out, time.Since(t0)
}

// Connect makes sure the client holds n open connections, round robin over bases as
// Fire spreads its texts, idle for the next Fire: a measured run then meets servers
// whose connections are open, whether a run before it left some or not. Each is used
// (or opened) by a GET of /healthz, whose answer must have a body: the answers are
// read only once all n have come (or failed), and until then no request can reuse
// another's connection. It returns how many of the n requests succeeded, each on a
// connection of its own.
func (d *Driver) Connect(ctx context.Context, bases []string, n int) int {
	var arrived, wg sync.WaitGroup
	var ok atomic.Int64
	arrived.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, bases[i%len(bases)]+"/healthz", nil)
			var res *http.Response
			if err == nil {
				res, err = d.Client.Do(req)
			}
			arrived.Done()
			if err != nil {
				return
			}
			arrived.Wait()
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK && res.ContentLength != 0 {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(ok.Load())
}

func (d *Driver) send(ctx context.Context, base, body, sig string) Answer {
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+TwilioPath, strings.NewReader(body))
	if err != nil {
		return Answer{Outcome: "error", Err: err, Base: base}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", sig)
	res, err := d.Client.Do(req)
	if err != nil {
		return Answer{Outcome: "error", Err: err, Base: base}
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	a := Answer{Outcome: res.Header.Get("X-Slot-Outcome"), Latency: time.Since(t0), Base: base}
	if res.StatusCode != http.StatusOK {
		a.Outcome = "http_" + strconv.Itoa(res.StatusCode)
	}
	return a
}

// NotSent reports whether err means the request never reached a server: the
// connection was refused, so nothing was stored or done.
func NotSent(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}
