package loadkit

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Overrides are Twilio's connection overrides of a webhook URL (its fragment, such as
// "rc=3&rp=all&ct=2000&rt=13000"), as Twilio documents them: ct, the time to connect
// (ms, default 5000); rt, the time to the answer (ms, default 15000); tt, the time all
// attempts may take (ms, default 15000); rc, the retries after a failed attempt (0-5,
// default 1); rp, which failures are retried (4xx, 5xx, ct, rt, all; default ct). The
// driver applies them to the requests it makes as Twilio would.
type Overrides struct {
	Connect, Read, Total time.Duration
	Retries              int
	Policy               []string
}

// DefaultOverrides is what Twilio does without overrides on the URL.
func DefaultOverrides() Overrides {
	return Overrides{Connect: 5 * time.Second, Read: 15 * time.Second, Total: 15 * time.Second, Retries: 1, Policy: []string{"ct"}}
}

// ParseOverrides reads a URL's connection overrides (the fragment, with or without its
// "#"); what it does not name keeps Twilio's default.
func ParseOverrides(fragment string) (Overrides, error) {
	o := DefaultOverrides()
	q, err := url.ParseQuery(strings.TrimPrefix(fragment, "#"))
	if err != nil {
		return o, fmt.Errorf("connection overrides %q: %w", fragment, err)
	}
	ms := func(k string, d *time.Duration) error {
		if v := q.Get(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("connection overrides: %s=%q", k, v)
			}
			*d = time.Duration(n) * time.Millisecond
		}
		return nil
	}
	if err := errors.Join(ms("ct", &o.Connect), ms("rt", &o.Read), ms("tt", &o.Total)); err != nil {
		return o, err
	}
	if v := q.Get("rc"); v != "" {
		if o.Retries, err = strconv.Atoi(v); err != nil {
			return o, fmt.Errorf("connection overrides: rc=%q", v)
		}
	}
	if v := q.Get("rp"); v != "" {
		o.Policy = strings.Split(v, ",")
	}
	return o, nil
}

// retries reports whether a failed attempt is tried again: its error (nil when an
// answer came) or, with an answer, its HTTP status, against the policy.
func (o Overrides) retries(err error, status int) bool {
	class := ""
	switch {
	case err != nil && NotSent(err):
		class = "ct"
	case err != nil:
		// No answer after the request left: a timeout, or the connection broke
		// (the instance died) while Twilio waited for the answer.
		class = "rt"
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && !sentAny(err) {
			class = "ct"
		}
	case status >= 500:
		class = "5xx"
	case status >= 400:
		class = "4xx"
	default:
		return false
	}
	return slices.Contains(o.Policy, "all") || slices.Contains(o.Policy, class)
}

// sentAny reports whether err happened after a connection was made (as far as the
// error says): a dial timeout is a connect failure.
func sentAny(err error) bool {
	var op *net.OpError
	return !(errors.As(err, &op) && op.Op == "dial")
}
