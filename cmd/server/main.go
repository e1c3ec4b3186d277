// Command server runs slot recovery: the shop API, the Twilio and Stripe webhooks, the
// owners' dashboard and the offer loop's workers.
//
//	server [serve]     apply migrations, then serve until SIGINT/SIGTERM
//	server migrate     apply migrations and exit
//	server simulate sms --from +1555... --to +1555... --body YES
//	                   sign and send an inbound text to a running server
//	server simulate stripe --type checkout.session.expired --booking ID
//	                   sign and send a Stripe event to a running server
//	server erasure-key retire
//	                   give up the kept hashes made under keys ERASURE_KEY no longer lists
//	server secrets-key reencrypt
//	                   move every secret sealed or derived under SECRETS_KEY to its newest key
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}
