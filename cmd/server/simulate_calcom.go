package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
)

// simulateCalcom signs a cal.com webhook delivery (a JSON body as cal.com sends it) with
// the connector's secret and posts it to the connector's webhook_url, as cal.com does.
func simulateCalcom(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("simulate calcom", flag.ContinueOnError)
	fs.SetOutput(stdout)
	target := fs.String("url", "", "the connector's webhook_url (PUBLIC_URL/webhooks/calcom/{id})")
	secret := fs.String("secret", "", "the connector's secret, as cal.com holds it")
	file := fs.String("file", "-", "the delivery's JSON body (- for standard input)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *target == "" || *secret == "" {
		return fmt.Errorf("simulate calcom: --url and --secret are required")
	}
	var body []byte
	var err error
	if *file == "-" {
		body, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	} else {
		body, err = os.ReadFile(*file)
	}
	if err != nil {
		return fmt.Errorf("simulate calcom: read the body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, *target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(calcom.SignatureHeader, calcom.Sign(*secret, body))
	return send(req, stdout, "")
}
