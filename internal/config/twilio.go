package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// loadTwilio reads the platform's Twilio account: required unless DEV_MODE=1.
func (c *Config) loadTwilio(get func(string) string, bad func(name, why string)) {
	c.TwilioAccountSID = get("TWILIO_ACCOUNT_SID")
	c.TwilioAuthToken = get("TWILIO_AUTH_TOKEN")
	c.TwilioAPIURL = get("TWILIO_API_URL")
	if (c.TwilioAccountSID == "") != (c.TwilioAuthToken == "") {
		bad("TWILIO_ACCOUNT_SID", "and TWILIO_AUTH_TOKEN must be set together")
	}
	if !c.TwilioConfigured() && !c.DevMode {
		bad("TWILIO_ACCOUNT_SID", "and TWILIO_AUTH_TOKEN are required unless DEV_MODE=1 (without them texts are only logged and inbound texts cannot be verified)")
	}
	checkAPIURL("TWILIO_API_URL", c.TwilioAPIURL, bad)
}

// loadSender reads the settings of shops' own senders (docs/sms-sender.md).
func (c *Config) loadSender(get func(string) string, bad func(name, why string)) {
	switch v := strings.ToLower(get("SMS_US_A2P")); v {
	case "", "off":
	case "required":
		c.SMSUSA2P = true
	default:
		bad("SMS_US_A2P", "must be off (the default) or required")
	}
	c.TwilioOverrides = strings.TrimPrefix(get("TWILIO_CONNECTION_OVERRIDES"), "#")
	if err := checkOverrides(c.TwilioOverrides); err != nil {
		bad("TWILIO_CONNECTION_OVERRIDES", err.Error())
	}
	c.TwilioISVProfileSID = get("TWILIO_ISV_PROFILE_SID")
	if c.TwilioISVProfileSID != "" && !isvProfile.MatchString(c.TwilioISVProfileSID) {
		bad("TWILIO_ISV_PROFILE_SID", "must be a customer profile SID: BU and 32 hexadecimal digits")
	}
}

var isvProfile = regexp.MustCompile(`^BU[0-9a-fA-F]{32}$`)

// checkOverrides checks a Twilio connection-overrides fragment against the ranges
// Twilio documents (docs/operations.md, Twilio set-up): ct 100-10000 ms, rt and tt
// 100-15000 ms, rc 0-5 retries, rp a comma-separated list of 4xx, 5xx, ct, rt and all;
// e (the edge) and sni as Twilio takes them.
func checkOverrides(f string) error {
	if f == "" {
		return nil
	}
	q, err := url.ParseQuery(f)
	if err != nil {
		return errors.New("must be a fragment such as rc=3&rp=all&ct=2000&rt=13000")
	}
	ranges := map[string][2]int{"ct": {100, 10000}, "rt": {100, 15000}, "tt": {100, 15000}, "rc": {0, 5}}
	for k, vs := range q {
		if len(vs) != 1 {
			return fmt.Errorf("names %s more than once", k)
		}
		v := vs[0]
		switch k {
		case "ct", "rt", "tt", "rc":
			n, err := strconv.Atoi(v)
			if r := ranges[k]; err != nil || n < r[0] || n > r[1] {
				return fmt.Errorf("%s must be a whole number from %d to %d", k, ranges[k][0], ranges[k][1])
			}
		case "rp":
			for _, p := range strings.Split(v, ",") {
				if !slices.Contains([]string{"4xx", "5xx", "ct", "rt", "all"}, p) {
					return errors.New("rp must list 4xx, 5xx, ct, rt or all, separated by commas")
				}
			}
		case "e", "sni":
		default:
			return fmt.Errorf("%s is not one of Twilio's connection overrides (ct, rt, tt, rc, rp, e, sni)", k)
		}
	}
	return nil
}
