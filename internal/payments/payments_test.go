package payments_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// TestTransient: the provider package's verdict, carried in *Error, is what counts;
// the sentinels are never transient, and anything else (the transport) is.
func TestTransient(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		err       error
		transient bool
	}{
		"nil":               {err: nil},
		"invalid":           {err: fmt.Errorf("create checkout: %w: no amount", payments.ErrInvalid)},
		"already completed": {err: fmt.Errorf("expire checkout: %w", payments.ErrAlreadyCompleted)},
		"not found":         {err: &payments.Error{Status: 404, NotFound: true, Transient: true}},
		"transient answer":  {err: fmt.Errorf("get checkout: %w", &payments.Error{Type: "api_error", Status: 500, Transient: true}), transient: true},
		"permanent answer":  {err: &payments.Error{Type: "invalid_request_error", Status: 400}},
		"network error":     {err: errors.New("read: connection reset by peer"), transient: true},
		"deadline":          {err: fmt.Errorf("refund: %w", context.DeadlineExceeded), transient: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.transient, payments.Transient(tc.err))
		})
	}
}

func TestErrorIsNotFound(t *testing.T) {
	t.Parallel()
	missing := &payments.Error{Type: "invalid_request_error", Code: "resource_missing", Status: 404, NotFound: true}
	require.ErrorIs(t, fmt.Errorf("get checkout: %w", missing), payments.ErrNotFound)
	require.NotErrorIs(t, &payments.Error{Type: "card_error", Code: "card_declined", Status: 402}, payments.ErrNotFound)
	require.NoError(t, errors.Unwrap(missing), "nothing behind a hand-made error")
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "stripe 404 invalid_request_error/resource_missing: No such checkout.session (request req_1)",
		(&payments.Error{Provider: "stripe", Type: "invalid_request_error", Code: "resource_missing", Status: 404, Msg: "No such checkout.session", RequestID: "req_1"}).Error())
	require.Equal(t, "payment provider 500 api_error", (&payments.Error{Type: "api_error", Status: 500}).Error())
}
