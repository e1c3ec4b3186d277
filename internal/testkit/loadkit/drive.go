package loadkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// Driver speaks to the server as its clients do: the shop API with bearer keys, and
// inbound texts signed with the Twilio auth token the server was given, as Twilio sends
// them: a text whose request fails is sent again as the inbound URL's connection
// overrides say (Overrides), and an answer whose <Message> has an action URL is
// reported there once taken, as Twilio reports it (Reported).
type Driver struct {
	Client *http.Client
	// AccountSID and AuthToken are the Twilio credentials the server checks texts with.
	AccountSID, AuthToken string
	// Overrides are the connection overrides of the inbound URL (the server's
	// TWILIO_CONNECTION_OVERRIDES); nil: Twilio's default, a request that left is never
	// sent again. With or without them, a text that cannot connect goes to the next
	// instance, as a load balancer would send it.
	Overrides *Overrides
	// CheckReport, when set, is given the form of every report on an answer's action
	// URL, to hold it to Twilio's contract.
	CheckReport func(url.Values)
	// seq numbers shops' SMS numbers, customers' phones and MessageSids.
	seq atomic.Int64
	// reports are the reports on answers' action URLs under way.
	reports sync.WaitGroup
	// Reported counts the reports the server answered 2xx; ReportsLost those that got
	// no 2xx after every attempt the action URL's overrides allow.
	Reported, ReportsLost atomic.Int64
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
	// Latency is the time to the answer (0 without one), from the first attempt.
	Latency time.Duration
	// Base is the instance that last got the request.
	Base string
	// Attempts is how many times the text was sent (a connection refused included).
	Attempts int
	// Action is the action URL of the answer's <Message>, "" for none.
	Action string
}

// Fire sends the texts, signed, round robin over bases, inFlight at a time, and returns
// what became of each and the wall time to the last answer. With failOver, a text that
// cannot connect to its instance (never sent: the instance is down) goes to the next
// one, as a load balancer would send it; a failure after the request left is final,
// unless the Overrides retry it (to the next instance: a balancer's choice). Answers
// with an action URL are reported there (report); Fire returns once every report is
// done, after the time it measures.
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
				out[i] = d.deliver(ctx, bases, i, bodies[i], sigs[i], failOver)
				if out[i].Action != "" {
					d.report(ctx, bases, slices.Index(bases, out[i].Base), out[i].Action, texts[i].Get("To"), texts[i].Get("From"))
				}
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(t0)
	d.reports.Wait()
	return out, took
}

// deliver sends the i-th text to bases[i] and, as failOver and the Overrides allow, to
// the next instances, and returns its last attempt's answer.
func (d *Driver) deliver(ctx context.Context, bases []string, i int, body, sig string, failOver bool) Answer {
	o := Overrides{Retries: 0}
	if d.Overrides != nil {
		o = *d.Overrides
	}
	t0 := time.Now()
	var a Answer
	retries := 0
	for k := 0; ; k++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if d.Overrides != nil {
			actx, cancel = context.WithTimeout(ctx, o.Read)
		}
		a = d.send(actx, bases[(i+k)%len(bases)], body, sig)
		cancel()
		a.Attempts = k + 1
		if a.Err == nil && a.Outcome != "" && !strings.HasPrefix(a.Outcome, "http_") {
			break
		}
		if ctx.Err() != nil || (d.Overrides != nil && time.Since(t0) >= o.Total) {
			break
		}
		if a.Err != nil && NotSent(a.Err) && failOver && k < len(bases)*(o.Retries+1) {
			continue // a balancer's failover: the request never reached a server
		}
		status, _ := strconv.Atoi(strings.TrimPrefix(a.Outcome, "http_"))
		if d.Overrides == nil || retries >= o.Retries || !o.retries(a.Err, status) {
			break
		}
		retries++
	}
	if a.Err == nil {
		a.Latency = time.Since(t0)
	}
	return a
}

// report posts, in the background, what Twilio posts to an answer's action URL once it
// has made the answer's message: a form with the message's own MessageSid, its
// MessageStatus ("sent"), AccountSid, ApiVersion, From (the shop's number) and To (the
// customer), with their older Sms* twins, signed over the URL without its fragment. The
// URL's PUBLIC_URL is replaced with an instance's base, from bases[first] on (the
// instance that answered: a balancer may send it anywhere, and this one most likely has
// an idle connection to it); the attempts follow the URL's own connection overrides (a
// refused connection goes to the next instance, as a balancer would send it).
func (d *Driver) report(ctx context.Context, bases []string, first int, action, from, to string) {
	d.reports.Add(1)
	go func() {
		defer d.reports.Done()
		target, fragment, _ := strings.Cut(action, "#")
		o, err := ParseOverrides(fragment)
		if err != nil || !strings.HasPrefix(target, PublicURL) {
			d.ReportsLost.Add(1)
			return
		}
		sid := fmt.Sprintf("SM%032d", d.Next())
		form := url.Values{
			"AccountSid": {d.AccountSID}, "ApiVersion": {"2010-04-01"}, "MessageSid": {sid}, "SmsSid": {sid},
			"MessageStatus": {"sent"}, "SmsStatus": {"sent"}, "From": {from}, "To": {to},
		}
		if d.CheckReport != nil {
			d.CheckReport(form)
		}
		body, sig := form.Encode(), twilio.Signature(d.AuthToken, target, form)
		path := strings.TrimPrefix(target, PublicURL)
		rctx := context.WithoutCancel(ctx)
		t0 := time.Now()
		retries := 0
		for k := 0; ; k++ {
			actx, cancel := context.WithTimeout(rctx, o.Read)
			status, err := d.post(actx, bases[(first+k)%len(bases)]+path, body, sig)
			cancel()
			if err == nil && status < 300 {
				d.Reported.Add(1)
				return
			}
			if time.Since(t0) >= o.Total && retries > 0 {
				break
			}
			if err != nil && NotSent(err) && k < len(bases)*(o.Retries+1) {
				continue
			}
			if retries >= o.Retries || !o.retries(err, status) {
				break
			}
			retries++
		}
		d.ReportsLost.Add(1)
	}()
}

// post sends a signed form and returns the HTTP status of the answer.
func (d *Driver) post(ctx context.Context, u, body, sig string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", sig)
	res, err := d.Client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// FireAt sends the texts, signed, round robin over bases, at perSecond texts a second
// whatever the answers' pace (an open loop: text i leaves at i/perSecond after the
// start, or as soon as fewer than maxInFlight are in flight), and returns what became
// of each and the wall time to the last answer. A server that slows down meets the
// same offered load, as it would from real customers, and its latencies show it.
// Answers with an action URL are reported there, as Fire does.
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
			if out[i].Action != "" {
				d.report(ctx, bases, i%len(bases), out[i].Action, f.Get("To"), f.Get("From"))
			}
		}()
	}
	wg.Wait()
	took := time.Since(t0)
	d.reports.Wait()
	return out, took
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
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if err != nil {
		// The answer broke off: Twilio has no answer to take.
		return Answer{Outcome: "error", Err: err, Base: base}
	}
	a := Answer{Outcome: res.Header.Get("X-Slot-Outcome"), Latency: time.Since(t0), Base: base, Action: actionOf(b)}
	if res.StatusCode != http.StatusOK {
		a.Outcome, a.Action = "http_"+strconv.Itoa(res.StatusCode), ""
	}
	return a
}

// actionOf is the action URL of the <Message> in a TwiML answer, unescaped; "" for
// none.
func actionOf(twiml []byte) string {
	s := string(twiml)
	i := strings.Index(s, "<Message ")
	if i < 0 {
		return ""
	}
	tag, _, _ := strings.Cut(s[i:], ">")
	_, v, ok := strings.Cut(tag, ` action="`)
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, `"`)
	return html.UnescapeString(v)
}

// NotSent reports whether err means the request never reached a server: the
// connection was refused, so nothing was stored or done.
func NotSent(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}
