package twilio

import (
	"net/url"

	"github.com/twilio/twilio-go/client"
)

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
