package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/sms/twilio"
	"github.com/slotrecovery/slotrecovery/internal/webhooks"
)

// simulate signs and sends a webhook to a running server, as Twilio (or Stripe, or
// cal.com) would.
func simulate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: server simulate sms --from E164 --to E164 --body TEXT [--url URL]\n" +
			"       server simulate stripe --type checkout.session.expired --booking ID [--url URL]\n" +
			"       server simulate calcom --url WEBHOOK_URL --secret SECRET [--file BODY.json]")
	}
	switch args[0] {
	case "sms":
		return simulateSMS(ctx, args[1:], getenv, stdout)
	case "stripe":
		return simulateStripe(ctx, args[1:], getenv, stdout)
	case "calcom":
		return simulateCalcom(ctx, args[1:], os.Stdin, stdout)
	default:
		return fmt.Errorf("simulate: unknown kind %q (sms, stripe or calcom)", args[0])
	}
}

func simulateSMS(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("simulate sms", flag.ContinueOnError)
	fs.SetOutput(stdout)
	base := fs.String("url", firstNonEmpty(getenv("PUBLIC_URL"), "http://127.0.0.1:8080"), "server base URL (signatures are computed against it)")
	from := fs.String("from", "", "customer's phone, E.164")
	to := fs.String("to", "", "shop's SMS number, E.164")
	body := fs.String("body", "YES", "message text")
	sid := fs.String("sid", "", "MessageSid (random when empty; repeat one to test redelivery)")
	optOut := fs.String("opt-out-type", "", "Twilio OptOutType (STOP, START, HELP)")
	// The default is read after parsing, so -h and usage errors never print the secret.
	token := fs.String("token", "", "Twilio auth token to sign with (default $TWILIO_AUTH_TOKEN; unsigned when both are empty: DEV_MODE servers only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *token == "" {
		*token = getenv("TWILIO_AUTH_TOKEN")
	}
	if *from == "" || *to == "" {
		return fmt.Errorf("simulate sms: --from and --to are required")
	}
	if *sid == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		*sid = "SM" + hex.EncodeToString(b)
	}
	form := url.Values{
		"MessageSid": {*sid}, "SmsSid": {*sid}, "AccountSid": {"ACsimulated"},
		"From": {*from}, "To": {*to}, "Body": {*body}, "NumMedia": {"0"},
	}
	if *optOut != "" {
		form.Set("OptOutType", *optOut)
	}
	target := strings.TrimRight(*base, "/") + webhooks.TwilioPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if *token != "" {
		req.Header.Set("X-Twilio-Signature", twilio.Signature(*token, target, form))
	}
	var answer bytes.Buffer
	if err := send(req, &answer, webhooks.OutcomeHeader); err != nil {
		_, _ = stdout.Write(answer.Bytes())
		return err
	}
	// As Twilio does once it has sent the answer: a report on the answer's action URL
	// (to --url, signed over the URL without its fragment). What is printed is the
	// answer without its action attribute, which names this text and no more.
	m := actionAttr.FindSubmatch(answer.Bytes())
	_, _ = stdout.Write(actionAttr.ReplaceAll(answer.Bytes(), nil))
	if m == nil {
		return nil
	}
	action, _, _ := strings.Cut(html.UnescapeString(string(m[1])), "#")
	u, err := url.Parse(action)
	if err != nil {
		return fmt.Errorf("simulate sms: action URL: %w", err)
	}
	reply := make([]byte, 16)
	_, _ = rand.Read(reply)
	rep := url.Values{"MessageSid": {"SM" + hex.EncodeToString(reply)}, "MessageStatus": {"sent"},
		"AccountSid": {"ACsimulated"}, "From": {*to}, "To": {*from}}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(*base, "/")+u.RequestURI(), strings.NewReader(rep.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if *token != "" {
		req.Header.Set("X-Twilio-Signature", twilio.Signature(*token, action, rep))
	}
	return send(req, io.Discard, "")
}

// actionAttr finds the action attribute (and its method) of a TwiML <Message>.
var actionAttr = regexp.MustCompile(` action="([^"]*)"(?: method="[A-Z]+")?`)

func send(req *http.Request, stdout io.Writer, header string) error {
	res, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	fmt.Fprintf(stdout, "HTTP %d", res.StatusCode)
	if v := res.Header.Get(header); v != "" {
		fmt.Fprintf(stdout, "  %s: %s", header, v)
	}
	fmt.Fprintf(stdout, "\n%s\n", b)
	if res.StatusCode >= 300 {
		return fmt.Errorf("server answered %d", res.StatusCode)
	}
	return nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
