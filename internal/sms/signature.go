package sms

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/twilio/twilio-go/client"
)

// Signature computes the X-Twilio-Signature Twilio sends with a webhook: the base64
// HMAC-SHA1, keyed by authToken, of the full URL followed by every parameter name and
// value, names sorted (byte order), no separators. A name with several values
// contributes each value, sorted, as Twilio's own helpers do; Twilio's SMS webhooks send
// every field once. url must be exactly what Twilio requested, query string included.
//
// It signs requests in tests and in the `server simulate sms` command.
func Signature(authToken, url string, params url.Values) string {
	var b strings.Builder
	b.WriteString(url)
	for _, k := range slices.Sorted(maps.Keys(params)) {
		vs := slices.Clone(params[k])
		slices.Sort(vs)
		for _, v := range vs {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Validator checks X-Twilio-Signature headers with twilio-go's request validator. It is
// safe for concurrent use.
type Validator struct {
	rv client.RequestValidator
}

// NewValidator returns a Validator for signatures made with authToken.
func NewValidator(authToken string) *Validator {
	return &Validator{rv: client.NewRequestValidator(authToken)}
}

// Valid reports whether signature is Twilio's signature of url and params. url is the
// URL Twilio was configured to call (build it from PUBLIC_URL, not from the request's
// Host), with any query string; params are the decoded form fields. Only each field's
// first value counts, like twilio-go's ValidateBody: Twilio sends every field once. A URL
// signed with or without its default port (443/80) is accepted either way.
func (v *Validator) Valid(url string, params url.Values, signature string) bool {
	m := make(map[string]string, len(params))
	for k, vs := range params {
		if len(vs) > 0 {
			m[k] = vs[0]
		}
	}
	return v.rv.Validate(url, m, signature)
}
