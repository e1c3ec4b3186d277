package main

import (
	"net/http"
	"regexp"
	"testing"
)

// TestAlertNumberConfirmedThenStopped: the owner's alert number gets alerts only once
// the code texted to it comes back, and none after it texts STOP to the shop's number
// (a number that is no customer: the STOP is kept as the shop's suppression, which the
// outbox honours when each text is sent), through the running server (issue 49).
func TestAlertNumberConfirmedThenStopped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(nil, fastTune)
	shop := e.newShop(base, "checkout", nil)
	const owner = "+15555550177"
	customers := []string{"+15555550171", "+15555550172", "+15555550173"}
	for _, p := range customers {
		if status := e.api(base, http.MethodPost, "/api/customers", shop.APIKey, map[string]any{"phone": p, "name": "C" + p[len(p)-2:], "sms_opt_in": true}, nil); status != http.StatusCreated {
			t.Fatalf("add customer %s: %d", p, status)
		}
	}
	alerts := func() int {
		n := 0
		for _, m := range e.twilio.MessagesTo(owner) {
			if regexp.MustCompile(`inbox: `).MatchString(m.Body) {
				n++
			}
		}
		return n
	}

	if status := e.api(base, http.MethodPatch, "/api/shop", shop.APIKey, map[string]any{"notify_phone": owner}, nil); status != http.StatusOK {
		t.Fatalf("PATCH notify_phone: %d", status)
	}
	var code string
	e.eventually("the code texted to the alert number", func() bool {
		for _, m := range e.twilio.MessagesTo(owner) {
			code = regexp.MustCompile(`\d{6}`).FindString(m.Body)
		}
		return code != ""
	})
	// Before the code comes back, a customer's text waits in the inbox with no alert.
	if got := e.text(base, customers[0], shop.SMSNumber, "Could I bring my friend along next time?").Outcome; got == "" {
		t.Fatal("no outcome")
	}
	e.settle("sms_text")
	if n := alerts(); n != 0 {
		t.Fatalf("%d alerts to a number not yet confirmed", n)
	}

	if status := e.api(base, http.MethodPost, "/api/shop/notify_phone/confirm", shop.APIKey, map[string]any{"code": code}, nil); status != http.StatusOK {
		t.Fatalf("confirm: %d", status)
	}
	e.text(base, customers[1], shop.SMSNumber, "Do you do beard trims too?")
	e.eventually("the alert to the confirmed number", func() bool { return alerts() == 1 })

	// The owner's phone says STOP to the shop's number: no alert after it.
	if got := e.text(base, owner, shop.SMSNumber, "STOP").Outcome; got != "opted_out" {
		t.Fatalf("STOP from the alert number read as %q", got)
	}
	e.text(base, customers[2], shop.SMSNumber, "Is parking free near you?")
	e.settle("sms_text")
	if n := alerts(); n != 1 {
		t.Fatalf("alerts after the alert number said STOP: %d in all, want the 1 before it; texts to it: %+v", n, e.twilio.MessagesTo(owner))
	}
}
