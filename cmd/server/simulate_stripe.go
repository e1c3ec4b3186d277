package main

import (
	"context"
	"fmt"
	"io"
)

func simulateStripe(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return fmt.Errorf("simulate stripe: the Stripe webhook is not served yet")
}
