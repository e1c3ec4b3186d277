package stripe

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	stripego "github.com/stripe/stripe-go/v76"

	"github.com/slotrecovery/slotrecovery/internal/payments"
)

// TestTranslate: Stripe's answer is classified here, where the *stripe.Error is known,
// Stripe-Should-Retry overriding the status; callers read the verdict through
// payments.Transient and errors.Is(err, payments.ErrNotFound).
func TestTranslate(t *testing.T) {
	t.Parallel()
	stripeErr := func(typ stripego.ErrorType, code stripego.ErrorCode, status int, shouldRetry string) *stripego.Error {
		se := &stripego.Error{Type: typ, Code: code, HTTPStatusCode: status, Msg: "msg", RequestID: "req_1"}
		if shouldRetry != "" {
			se.LastResponse = &stripego.APIResponse{Header: http.Header{"Stripe-Should-Retry": {shouldRetry}}}
		}
		return se
	}
	cases := map[string]struct {
		err       *stripego.Error
		transient bool
		notFound  bool
	}{
		"500 api_error":                   {err: stripeErr(stripego.ErrorTypeAPI, "", 500, ""), transient: true},
		"429 rate limit":                  {err: stripeErr(stripego.ErrorTypeInvalidRequest, "rate_limit", 429, ""), transient: true},
		"409 key in use":                  {err: stripeErr(stripego.ErrorTypeIdempotency, "idempotency_key_in_use", 409, ""), transient: true},
		"lock_timeout":                    {err: stripeErr(stripego.ErrorTypeInvalidRequest, stripego.ErrorCodeLockTimeout, 400, ""), transient: true},
		"api_error with a 400":            {err: stripeErr(stripego.ErrorTypeAPI, "", 400, ""), transient: true},
		"400 invalid request":             {err: stripeErr(stripego.ErrorTypeInvalidRequest, "", 400, "")},
		"402 card declined":               {err: stripeErr(stripego.ErrorTypeCard, "card_declined", 402, "")},
		"404 resource missing":            {err: stripeErr(stripego.ErrorTypeInvalidRequest, stripego.ErrorCodeResourceMissing, 404, ""), notFound: true},
		"500 told not to retry":           {err: stripeErr(stripego.ErrorTypeAPI, "", 500, "false")},
		"400 told to retry":               {err: stripeErr(stripego.ErrorTypeInvalidRequest, "", 400, "true"), transient: true},
		"resource missing, told to retry": {err: stripeErr(stripego.ErrorTypeInvalidRequest, stripego.ErrorCodeResourceMissing, 404, "true"), notFound: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := fmt.Errorf("get checkout cs_1: %w", translate(tc.err))
			require.Equal(t, tc.transient, payments.Transient(err))
			require.Equal(t, tc.notFound, errors.Is(err, payments.ErrNotFound))
			var pe *payments.Error
			require.ErrorAs(t, err, &pe)
			require.Equal(t, string(tc.err.Type), pe.Type)
			require.Equal(t, string(tc.err.Code), pe.Code)
			require.Equal(t, tc.err.HTTPStatusCode, pe.Status)
			require.Equal(t, "msg", pe.Msg)
			require.Equal(t, "req_1", pe.RequestID)
			var se *stripego.Error
			require.ErrorAs(t, err, &se, "*payments.Error unwraps to *stripe.Error")
			require.Same(t, tc.err, se)
		})
	}

	t.Run("other errors pass through", func(t *testing.T) {
		t.Parallel()
		other := errors.New("read: connection reset by peer")
		require.Same(t, other, translate(other))
	})
}
