package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Signature computes the X-Twilio-Signature Twilio sends with a webhook: the base64
// HMAC-SHA1, keyed by authToken, of the full URL followed by every parameter name and
// value, names sorted (byte order), no separators. A name with several values
// contributes each value, sorted, as Twilio's own helpers do; Twilio's SMS webhooks send
// every field once. url must be exactly what Twilio requested, query string included.
//
// It signs requests in tests, in the load tools and in the `server simulate sms`
// command; NewValidator checks them.
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
