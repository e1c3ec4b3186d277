package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// simulateStripe signs a realistic test-mode event for a booking with the webhook
// secret and posts it to a running server, as Stripe would.
//
// The event is signed with the server's real secret, so it is as good as Stripe's own:
// a "completed" sent to production would confirm a booking nobody paid for. The target
// is therefore never guessed from PUBLIC_URL: --url is required, unless DEV_MODE=1 says
// this is a development machine.
func simulateStripe(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("simulate stripe", flag.ContinueOnError)
	fs.SetOutput(stdout)
	base := fs.String("url", "", "server base URL (required unless DEV_MODE=1, where it defaults to PUBLIC_URL, else http://127.0.0.1:8080)")
	typ := fs.String("type", stripe.EventCheckoutExpired, "event type: "+strings.Join([]string{
		stripe.EventCheckoutCompleted, stripe.EventCheckoutAsyncSucceeded, stripe.EventCheckoutExpired,
		stripe.EventCheckoutAsyncFailed, stripe.EventPaymentFailed}, ", "))
	booking := fs.String("booking", "", "booking id (the opening's booking.id in GET /api/openings/{id})")
	session := fs.String("session", "", "Checkout Session id (booking.stripe_checkout_session_id); empty matches any")
	intent := fs.String("payment-intent", "", "PaymentIntent id (random for payment types when empty)")
	status := fs.String("payment-status", "", "session payment_status: paid or unpaid (default: paid for completed and async_payment_succeeded)")
	id := fs.String("id", "", "event id (random when empty; repeat one to test a redelivery)")
	age := fs.Duration("age", 0, "sign as if sent this long ago (over 5m0s is refused as stale)")
	account := fs.String("account", "", "a connected account's id (acct_…): send the event as that account's, "+
		"to the Connect endpoint ("+webhooks.StripeConnectPath+"), signed with STRIPE_CONNECT_WEBHOOK_SECRET")
	// The default is filled in after parsing, so that -h never prints the secret.
	secret := fs.String("secret", "", "webhook signing secret (default: the first of STRIPE_WEBHOOK_SECRET, "+
		"or of STRIPE_CONNECT_WEBHOOK_SECRET with --account)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path, secretVar := webhooks.StripePath, "STRIPE_WEBHOOK_SECRET"
	if *account != "" {
		if !strings.HasPrefix(*account, "acct_") {
			return fmt.Errorf("simulate stripe: --account must be a connected account's id (acct_…)")
		}
		path, secretVar = webhooks.StripeConnectPath, "STRIPE_CONNECT_WEBHOOK_SECRET"
	}
	if *secret == "" {
		*secret = firstSecret(getenv(secretVar))
	}
	if *base == "" {
		if dev := getenv("DEV_MODE"); dev != "1" && dev != "true" {
			return fmt.Errorf("simulate stripe: --url is required (the event is signed with the real webhook secret; " +
				"only DEV_MODE=1 defaults it to PUBLIC_URL or http://127.0.0.1:8080)")
		}
		*base = firstNonEmpty(getenv("PUBLIC_URL"), "http://127.0.0.1:8080")
	}
	if *booking == "" {
		return fmt.Errorf("simulate stripe: --booking is required")
	}
	if *secret == "" {
		return fmt.Errorf("simulate stripe: --secret or %s is required", secretVar)
	}
	if *id == "" {
		*id = "evt_sim_" + randomHex(12)
	}
	if *status == "" {
		*status = stripe.PaymentUnpaid
		if *typ == stripe.EventCheckoutCompleted || *typ == stripe.EventCheckoutAsyncSucceeded {
			*status = stripe.PaymentPaid
		}
	}
	if *intent == "" && (*status == stripe.PaymentPaid || strings.HasPrefix(*typ, "payment_intent.")) {
		*intent = "pi_sim_" + randomHex(12)
	}
	at := time.Now().Add(-*age)
	payload := stripe.TestEventPayload(*id, *typ, *booking, *session, *intent, *status, at)
	if *account != "" {
		payload = stripe.OnAccount(payload, *account)
	}
	target := strings.TrimRight(*base, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", stripe.SignedTestPayload(payload, *secret, at))
	if *account != "" {
		fmt.Fprintf(stdout, "POST %s  %s %s booking %s account %s\n", target, *typ, *id, *booking, *account)
	} else {
		fmt.Fprintf(stdout, "POST %s  %s %s booking %s\n", target, *typ, *id, *booking)
	}
	return send(req, stdout, "")
}

func firstSecret(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
