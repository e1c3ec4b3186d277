package stripe_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stripego "github.com/stripe/stripe-go/v76"

	"github.com/slotrecovery/slotrecovery/internal/payments"
	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

func TestMain(m *testing.M) {
	// Pdeathsig already kills stripe-mock with the test binary on Linux;
	// Stop makes it explicit and portable.
	defer stripetest.Stop()
	m.Run()
}

// newClient returns a Client talking to stripe-mock through a fresh Recorder.
func newClient(t *testing.T, cfg stripe.Config) (*stripe.Client, *stripetest.Recorder) {
	t.Helper()
	rec := stripetest.NewRecorder(t, stripetest.Mock(t))
	if cfg.SecretKey == "" {
		cfg.SecretKey = "sk_test_slotrecovery"
	}
	cfg.APIURL = rec.URL
	c, err := stripe.New(cfg)
	require.NoError(t, err)
	return c, rec
}

func checkoutRequest(bookingID string) payments.CheckoutRequest {
	return payments.CheckoutRequest{
		BookingID:   bookingID,
		AmountCents: 4500,
		Currency:    "usd",
		Description: "Haircut at Joe's, Sat 22 Nov 15:00",
		Locale:      "es",
		ExpiresAt:   time.Now().Add(31 * time.Minute).Truncate(time.Second),
		SuccessURL:  "https://example.com/paid",
		CancelURL:   "https://example.com/cancelled",
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		cfg stripe.Config
		ok  bool
	}{
		"minimal":          {cfg: stripe.Config{SecretKey: "sk_test_x"}, ok: true},
		"all fields":       {cfg: stripe.Config{SecretKey: "sk_test_x", APIURL: "http://127.0.0.1:12111", Timeout: time.Second, MaxNetworkRetries: 1}, ok: true},
		"no key":           {cfg: stripe.Config{}},
		"relative url":     {cfg: stripe.Config{SecretKey: "sk_test_x", APIURL: "localhost:12111"}},
		"ftp url":          {cfg: stripe.Config{SecretKey: "sk_test_x", APIURL: "ftp://example.com"}},
		"negative timeout": {cfg: stripe.Config{SecretKey: "sk_test_x", Timeout: -time.Second}},
		"negative retries": {cfg: stripe.Config{SecretKey: "sk_test_x", MaxNetworkRetries: -1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := stripe.New(tc.cfg)
			if tc.ok {
				require.NoError(t, err)
				require.NotNil(t, c)
				return
			}
			require.ErrorIs(t, err, payments.ErrInvalid)
		})
	}
}

func TestCreateCheckout(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})
	req := checkoutRequest("bk_create_1")

	got, err := c.CreateCheckout(t.Context(), req)
	require.NoError(t, err)
	// stripe-mock answers fixtures: the ids are not ours, only present.
	require.NotEmpty(t, got.SessionID)
	require.NotEmpty(t, got.URL)
	// stripe-mock echoes top-level scalars such as expires_at.
	require.Equal(t, req.ExpiresAt.UTC(), got.ExpiresAt)

	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	require.Equal(t, http.MethodPost, r.Method)
	require.Equal(t, "/v1/checkout/sessions", r.Path)
	require.Equal(t, "checkout:bk_create_1:"+strconv.FormatInt(req.ExpiresAt.Unix(), 10), r.IdempotencyKey)
	want := map[string]string{
		"mode":                 "payment",
		"client_reference_id":  "bk_create_1",
		"metadata[booking_id]": "bk_create_1",
		"payment_intent_data[metadata][booking_id]":     "bk_create_1",
		"line_items[0][quantity]":                       "1",
		"line_items[0][price_data][currency]":           "usd",
		"line_items[0][price_data][unit_amount]":        "4500",
		"line_items[0][price_data][product_data][name]": "Haircut at Joe's, Sat 22 Nov 15:00",
		"expires_at":  strconv.FormatInt(req.ExpiresAt.Unix(), 10),
		"success_url": "https://example.com/paid",
		"cancel_url":  "https://example.com/cancelled",
		"locale":      "es", // the payment page in the customer's language
		// Card only: a bank debit settles days after the 30-minute hold.
		"payment_method_types[0]": "card",
	}
	for k, v := range want {
		require.Equal(t, v, r.Form.Get(k), "form field %s", k)
	}
	require.Len(t, r.Form["payment_method_types[1]"], 0, "no other payment method")
	require.Equal(t, http.StatusOK, r.Status, "stripe-mock accepts the parameters")

	// A retry for the same booking sends the same key, so real Stripe
	// returns the first session instead of making a second payment link.
	_, err = c.CreateCheckout(t.Context(), req)
	require.NoError(t, err)
	_, err = c.CreateCheckout(t.Context(), checkoutRequest("bk_create_2"))
	require.NoError(t, err)
	reqs = rec.Requests()
	require.Equal(t, 3, rec.Count(http.MethodPost, "/v1/checkout/sessions"))
	require.Equal(t, reqs[0].IdempotencyKey, reqs[1].IdempotencyKey)
	require.True(t, strings.HasPrefix(reqs[2].IdempotencyKey, "checkout:bk_create_2:"), reqs[2].IdempotencyKey)

	// A later expiry (the first attempt never reached Stripe in time) is a new key.
	later := req
	later.ExpiresAt = req.ExpiresAt.Add(time.Minute)
	_, err = c.CreateCheckout(t.Context(), later)
	require.NoError(t, err)
	require.NotEqual(t, reqs[0].IdempotencyKey, rec.Requests()[3].IdempotencyKey)
}

func TestCreateCheckoutValidation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c, rec := newClient(t, stripe.Config{Now: func() time.Time { return now }})
	valid := checkoutRequest("bk_valid")
	valid.ExpiresAt = now.Add(31 * time.Minute)

	cases := map[string]func(r *payments.CheckoutRequest){
		"no booking id":        func(r *payments.CheckoutRequest) { r.BookingID = "" },
		"long booking id":      func(r *payments.CheckoutRequest) { r.BookingID = string(make([]byte, 201)) },
		"zero amount":          func(r *payments.CheckoutRequest) { r.AmountCents = 0 },
		"negative amount":      func(r *payments.CheckoutRequest) { r.AmountCents = -100 },
		"no currency":          func(r *payments.CheckoutRequest) { r.Currency = "" },
		"upper-case currency":  func(r *payments.CheckoutRequest) { r.Currency = "USD" },
		"no description":       func(r *payments.CheckoutRequest) { r.Description = "" },
		"no expiry":            func(r *payments.CheckoutRequest) { r.ExpiresAt = time.Time{} },
		"expires too soon":     func(r *payments.CheckoutRequest) { r.ExpiresAt = now.Add(29 * time.Minute) },
		"expires in the past":  func(r *payments.CheckoutRequest) { r.ExpiresAt = now.Add(-time.Minute) },
		"expires too late":     func(r *payments.CheckoutRequest) { r.ExpiresAt = now.Add(24*time.Hour + time.Minute) },
		"no success url":       func(r *payments.CheckoutRequest) { r.SuccessURL = "" },
		"relative success url": func(r *payments.CheckoutRequest) { r.SuccessURL = "/paid" },
		"bad cancel url":       func(r *payments.CheckoutRequest) { r.CancelURL = "mailto:joe@example.com" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			r := valid
			mutate(&r)
			_, err := c.CreateCheckout(t.Context(), r)
			require.ErrorIs(t, err, payments.ErrInvalid)
			require.False(t, payments.Transient(err))
		})
	}
	t.Run("window edges", func(t *testing.T) {
		for _, ahead := range []time.Duration{30 * time.Minute, 24 * time.Hour} {
			r := valid
			r.ExpiresAt = now.Add(ahead)
			_, err := c.CreateCheckout(t.Context(), r)
			require.NoError(t, err, "expiry %s ahead", ahead)
		}
	})
	// Only the two valid requests reached Stripe.
	require.Equal(t, 2, rec.Count("", "/v1/"))
}

func TestTransient(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		status    int
		transient bool
		typ       string
	}{
		"500 api_error":        {status: 500, transient: true, typ: "api_error"},
		"503":                  {status: 503, transient: true, typ: "api_error"},
		"429 rate limit":       {status: 429, transient: true, typ: "invalid_request_error"},
		"409 key in use":       {status: 409, transient: true, typ: "idempotency_error"},
		"400 invalid request":  {status: 400, typ: "invalid_request_error"},
		"402 card declined":    {status: 402, typ: "card_error"},
		"404 resource missing": {status: 404, typ: "invalid_request_error"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newClient(t, stripe.Config{})
			rec.FailNext(1, tc.status)

			// A retry sends the same request (the caller stores the expiry with the
			// booking), so the expiry, part of the idempotency key, is read once: two
			// calls to checkoutRequest straddling a second made two keys.
			req := checkoutRequest("bk_transient")
			_, err := c.CreateCheckout(t.Context(), req)
			require.Error(t, err)
			require.Equal(t, tc.transient, payments.Transient(err))
			var pe *payments.Error
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.status, pe.Status)
			require.Equal(t, tc.typ, pe.Type)
			var se *stripego.Error
			require.ErrorAs(t, err, &se, "payments.Error unwraps to *stripe.Error")

			// The failure was answered at the proxy; the next call goes
			// through with the same idempotency key.
			_, err = c.CreateCheckout(t.Context(), req)
			require.NoError(t, err)
			reqs := rec.Requests()
			require.Len(t, reqs, 2)
			require.Equal(t, reqs[0].IdempotencyKey, reqs[1].IdempotencyKey)
		})
	}

	t.Run("lock_timeout", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_locked", 429,
			stripetest.ErrorBody("invalid_request_error", "lock_timeout", "This object cannot be accessed right now."))
		_, err := c.GetCheckout(t.Context(), "", "cs_locked")
		require.True(t, payments.Transient(err))
	})

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{Timeout: 100 * time.Millisecond})
		rec.Delay(2 * time.Second)
		_, err := c.GetCheckout(t.Context(), "", "cs_slow")
		require.Error(t, err)
		require.True(t, payments.Transient(err))
	})

	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		c, err := stripe.New(stripe.Config{SecretKey: "sk_test_x", APIURL: "http://127.0.0.1:1"})
		require.NoError(t, err)
		_, err = c.GetCheckout(t.Context(), "", "cs_nowhere")
		require.Error(t, err)
		require.True(t, payments.Transient(err))
	})

	t.Run("cancelled context", func(t *testing.T) {
		t.Parallel()
		c, _ := newClient(t, stripe.Config{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := c.GetCheckout(ctx, "", "cs_cancelled")
		require.ErrorIs(t, err, context.Canceled)
		require.True(t, payments.Transient(err))
	})

	t.Run("not errors", func(t *testing.T) {
		t.Parallel()
		require.False(t, payments.Transient(nil))
		require.False(t, payments.Transient(payments.ErrAlreadyCompleted))
		require.True(t, payments.Transient(errors.New("read: connection reset by peer")))
	})
}

func TestGetCheckout(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})

	t.Run("stripe-mock", func(t *testing.T) {
		s, err := c.GetCheckout(t.Context(), "", "cs_test_get")
		require.NoError(t, err)
		// stripe-mock reflects the id from the path into its fixture.
		require.Equal(t, "cs_test_get", s.ID)
		require.Equal(t, payments.SessionOpen, s.State)
		require.Equal(t, 1, rec.Count(http.MethodGet, "/v1/checkout/sessions/cs_test_get"))
	})

	t.Run("booking from metadata", func(t *testing.T) {
		rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_meta", 200, sessionJSON("cs_meta", "complete", "paid", "bk_meta", "bk_ref", `{"id":"pi_expanded","object":"payment_intent"}`))
		s, err := c.GetCheckout(t.Context(), "", "cs_meta")
		require.NoError(t, err)
		require.Equal(t, payments.Session{
			ID:              "cs_meta",
			State:           payments.SessionPaid,
			PaymentIntentID: "pi_expanded",
			BookingID:       "bk_meta",
			ExpiresAt:       time.Unix(1795307573, 0).UTC(),
			AmountTotal:     4500,
			Currency:        "usd",
		}, s)
	})

	t.Run("booking from client_reference_id", func(t *testing.T) {
		rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_ref", 200, sessionJSON("cs_ref", "open", "unpaid", "", "bk_ref", "null"))
		s, err := c.GetCheckout(t.Context(), "", "cs_ref")
		require.NoError(t, err)
		require.Equal(t, "bk_ref", s.BookingID)
		require.Empty(t, s.PaymentIntentID)
	})

	// Stripe's status and payment_status become one state, in the ledger's words.
	for _, tc := range []struct {
		status, paymentStatus string
		want                  payments.SessionState
	}{
		{"open", "unpaid", payments.SessionOpen},
		{"complete", "paid", payments.SessionPaid},
		{"complete", "no_payment_required", payments.SessionPaid},
		{"complete", "unpaid", payments.SessionPending},
		{"expired", "unpaid", payments.SessionExpired},
		{"some_future_status", "unpaid", payments.SessionOpen},
	} {
		t.Run("state "+tc.status+"/"+tc.paymentStatus, func(t *testing.T) {
			id := "cs_state_" + tc.status + "_" + tc.paymentStatus
			rec.Respond(http.MethodGet, "/v1/checkout/sessions/"+id, 200, sessionJSON(id, tc.status, tc.paymentStatus, "bk_state", "bk_state", "null"))
			s, err := c.GetCheckout(t.Context(), "", id)
			require.NoError(t, err)
			require.Equal(t, tc.want, s.State)
		})
	}

	t.Run("missing", func(t *testing.T) {
		rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_gone", 404,
			stripetest.ErrorBody("invalid_request_error", "resource_missing", "No such checkout.session: 'cs_gone'"))
		_, err := c.GetCheckout(t.Context(), "", "cs_gone")
		var pe *payments.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "resource_missing", pe.Code)
		require.False(t, payments.Transient(err))
	})

	t.Run("no id", func(t *testing.T) {
		_, err := c.GetCheckout(t.Context(), "", "")
		require.ErrorIs(t, err, payments.ErrInvalid)
	})
}

// sessionJSON is a Checkout Session as Stripe renders it; metadata is
// omitted when bookingMeta is empty.
func sessionJSON(id, status, paymentStatus, bookingMeta, clientRef, paymentIntent string) string {
	meta := `{}`
	if bookingMeta != "" {
		meta = `{"booking_id":"` + bookingMeta + `"}`
	}
	return `{"id":"` + id + `","object":"checkout.session","status":"` + status +
		`","payment_status":"` + paymentStatus + `","client_reference_id":"` + clientRef +
		`","metadata":` + meta + `,"payment_intent":` + paymentIntent +
		`,"expires_at":1795307573,"amount_total":4500,"currency":"usd","mode":"payment","url":null}`
}

func TestExpireCheckout(t *testing.T) {
	t.Parallel()
	notOpen := stripetest.ErrorBody("invalid_request_error", "",
		"Only Checkout Sessions with a status in [\"open\"] can be expired.")

	t.Run("open session", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		require.NoError(t, c.ExpireCheckout(t.Context(), "", "cs_open"))
		require.Equal(t, 1, rec.Count(http.MethodPost, "/v1/checkout/sessions/cs_open/expire"))
		require.Equal(t, 0, rec.Count(http.MethodGet, "/v1/checkout/sessions/"))
	})

	t.Run("already completed", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodPost, "/v1/checkout/sessions/cs_paid/expire", 400, notOpen)
		rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_paid", 200, sessionJSON("cs_paid", "complete", "paid", "bk_paid", "bk_paid", `"pi_paid"`))
		err := c.ExpireCheckout(t.Context(), "", "cs_paid")
		require.ErrorIs(t, err, payments.ErrAlreadyCompleted)
		require.False(t, payments.Transient(err))
		require.Equal(t, 1, rec.Count(http.MethodGet, "/v1/checkout/sessions/cs_paid"))
	})

	t.Run("already expired", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodPost, "/v1/checkout/sessions/cs_old/expire", 400, notOpen)
		rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_old", 200, sessionJSON("cs_old", "expired", "unpaid", "bk_old", "bk_old", "null"))
		require.NoError(t, c.ExpireCheckout(t.Context(), "", "cs_old"))
	})

	t.Run("still open after a 400", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodPost, "/v1/checkout/sessions/cs_odd/expire", 400, notOpen)
		rec.Respond(http.MethodGet, "/v1/checkout/sessions/cs_odd", 200, sessionJSON("cs_odd", "open", "unpaid", "bk_odd", "bk_odd", "null"))
		err := c.ExpireCheckout(t.Context(), "", "cs_odd")
		require.Error(t, err)
		require.NotErrorIs(t, err, payments.ErrAlreadyCompleted)
		var pe *payments.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 400, pe.Status)
	})

	t.Run("server error does not retrieve", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.FailNext(1, 500)
		err := c.ExpireCheckout(t.Context(), "", "cs_flaky")
		require.True(t, payments.Transient(err))
		require.Equal(t, 0, rec.Count(http.MethodGet, "/v1/checkout/sessions/"))
	})

	t.Run("no id", func(t *testing.T) {
		t.Parallel()
		c, _ := newClient(t, stripe.Config{})
		require.ErrorIs(t, c.ExpireCheckout(t.Context(), "", ""), payments.ErrInvalid)
	})
}

func TestRefund(t *testing.T) {
	t.Parallel()
	c, rec := newClient(t, stripe.Config{})

	id, err := c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_refund", BookingID: "bk_refund"})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	_, err = c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_refund", BookingID: "bk_refund"})
	require.NoError(t, err)
	// A second payment of the same booking is another refund, under another key.
	_, err = c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_second", BookingID: "bk_refund"})
	require.NoError(t, err)

	reqs := rec.Requests()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		require.Equal(t, "/v1/refunds", r.Path)
		require.Equal(t, "refund:bk_refund:"+r.Form.Get("payment_intent"), r.IdempotencyKey)
		require.Equal(t, "bk_refund", r.Form.Get("metadata[booking_id]"))
		require.Equal(t, http.StatusOK, r.Status)
	}
	require.Equal(t, "pi_refund", reqs[0].Form.Get("payment_intent"))
	require.Equal(t, reqs[0].IdempotencyKey, reqs[1].IdempotencyKey)
	require.NotEqual(t, reqs[0].IdempotencyKey, reqs[2].IdempotencyKey)

	_, err = c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "", BookingID: "bk_refund"})
	require.ErrorIs(t, err, payments.ErrInvalid)
	_, err = c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_refund", BookingID: ""})
	require.ErrorIs(t, err, payments.ErrInvalid)
	require.Equal(t, 3, rec.Count("", "/"))
}

// TestRefundAlreadyRefunded: Stripe refuses to refund a payment refunded already (a
// retry after the idempotency key expired, or a refund made by hand); that is success,
// with the existing refund read back.
func TestRefundAlreadyRefunded(t *testing.T) {
	t.Parallel()
	refused := stripetest.ErrorBody("invalid_request_error", "charge_already_refunded", "Charge ch_1 has already been refunded.")

	t.Run("read back", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodPost, "/v1/refunds", http.StatusBadRequest, refused)
		rec.Respond(http.MethodGet, "/v1/refunds", http.StatusOK, `{"object":"list","url":"/v1/refunds","has_more":false,"data":[`+
			`{"id":"re_failed","object":"refund","status":"failed","payment_intent":"pi_done"},`+
			`{"id":"re_existing","object":"refund","status":"succeeded","payment_intent":"pi_done"}]}`)
		id, err := c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_done", BookingID: "bk_done"})
		require.NoError(t, err)
		require.Equal(t, "re_existing", id)
		reqs := rec.Requests()
		require.Len(t, reqs, 2)
		require.Equal(t, http.MethodGet, reqs[1].Method)
		require.Equal(t, "pi_done", reqs[1].Query.Get("payment_intent"))
	})

	t.Run("nothing to read back", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodPost, "/v1/refunds", http.StatusBadRequest, refused)
		rec.Respond(http.MethodGet, "/v1/refunds", http.StatusOK, `{"object":"list","url":"/v1/refunds","has_more":false,"data":[]}`)
		_, err := c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_odd", BookingID: "bk_odd"})
		require.ErrorIs(t, err, payments.ErrNotFound)
		require.False(t, payments.Transient(err))
	})

	t.Run("stripe-mock list", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodPost, "/v1/refunds", http.StatusBadRequest, refused)
		id, err := c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_mock", BookingID: "bk_mock"})
		require.NoError(t, err)
		require.NotEmpty(t, id)
		require.Equal(t, http.StatusOK, rec.Requests()[1].Status, "stripe-mock accepts the list parameters")
	})

	t.Run("another refusal is an error", func(t *testing.T) {
		t.Parallel()
		c, rec := newClient(t, stripe.Config{})
		rec.Respond(http.MethodPost, "/v1/refunds", http.StatusBadRequest,
			stripetest.ErrorBody("invalid_request_error", "payment_intent_unexpected_state", "This PaymentIntent is not refundable."))
		_, err := c.Refund(t.Context(), payments.RefundRequest{PaymentIntentID: "pi_bad", BookingID: "bk_bad"})
		require.Error(t, err)
		require.False(t, payments.Transient(err))
		require.Equal(t, 1, rec.Count("", "/"))
	})
}
