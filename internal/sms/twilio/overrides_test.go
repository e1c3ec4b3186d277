package twilio_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
)

// TestValidatorAcceptsConnectionOverrides: a webhook URL configured with Twilio's
// connection overrides ("…/sms#rc=3&rp=all&ct=2000&rt=13000") reaches the server without
// its fragment, which a client never sends. Twilio's signature is over the URL without
// the fragment (what the implementations that document it say); a helper library given
// the configured URL signs it with the fragment. With the overrides configured, both are
// accepted, on the default port and with it written out, and nothing else is: another
// fragment, a fragment the server was not told of, the wrong token. Without them, only
// the URL without a fragment is.
func TestValidatorAcceptsConnectionOverrides(t *testing.T) {
	const token, overrides = "test-auth-token-0123456789", "rc=3&rp=all&ct=2000&rt=13000"
	base := "https://slots.example.test/webhooks/twilio/sms"
	form := url.Values{"MessageSid": {"SM0123"}, "From": {"+15550001111"}, "To": {"+15550002222"}, "Body": {"YES"}}
	with := twilio.NewValidatorWithOverrides(token, overrides)
	hashed := twilio.NewValidatorWithOverrides(token, "#"+overrides)
	without := twilio.NewValidator(token)
	cases := []struct {
		name          string
		sig           string
		withOverrides bool
		withoutThem   bool
	}{
		{"signed without the fragment", sign(token, base, form), true, true},
		{"signed with the fragment", sign(token, base+"#"+overrides, form), true, false},
		{"signed with the fragment and the default port", sign(token, "https://slots.example.test:443/webhooks/twilio/sms#"+overrides, form), true, false},
		{"signed with another fragment", sign(token, base+"#rc=5&rp=all", form), false, false},
		{"signed with the fragment by another token", sign("another-token-0123456789", base+"#"+overrides, form), false, false},
	}
	for _, c := range cases {
		require.Equal(t, c.withOverrides, with.Valid(base, form, c.sig), "%s, overrides configured", c.name)
		require.Equal(t, c.withOverrides, hashed.Valid(base, form, c.sig), "%s, overrides configured with their #", c.name)
		require.Equal(t, c.withoutThem, without.Valid(base, form, c.sig), "%s, no overrides configured", c.name)
	}
	// The signed Signature helper agrees with the independent one on both forms.
	require.True(t, with.Valid(base, form, twilio.Signature(token, base+"#"+overrides, form)))
	require.True(t, with.Valid(base+"?for=SM1", form, twilio.Signature(token, base+"?for=SM1", form)))
}
