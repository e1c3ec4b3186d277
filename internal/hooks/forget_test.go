package hooks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// TestForgetCustomerScrubsTheAnswers: erasing a customer scrubs, besides the events that
// name them, what their deliveries' receivers answered. One receiver echoes the body (as
// request bins and catch-all integrations do: each attempt keeps the answer's first
// bytes), another answers a broken status line quoting the number (kept in the
// attempt's error and the delivery's last error). An attempt in flight while the erasure
// commits keeps nothing either. Another customer's events keep their logs.
func TestForgetCustomerScrubsTheAnswers(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	const erasedPhone, keptPhone = "+15550007391", "+15550008812"
	erased, kept := uuid.New(), uuid.New()

	// The echo receiver. While gate is set, a request says it arrived, then waits for
	// the gate to open before it answers.
	var gate atomic.Pointer[chan struct{}]
	arrived := make(chan struct{}, 1)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if g := gate.Load(); g != nil {
			arrived <- struct{}{}
			select {
			case <-*g:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(echo.Close)
	// The broken receiver: not HTTP, a line quoting the number it was sent.
	broken := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		_, body, err := readRequest(br)
		if err != nil {
			return
		}
		var ev struct {
			Data struct{ Phone string } `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		_, _ = io.WriteString(c, "unknown-caller:"+ev.Data.Phone+"\r\n")
	})
	for _, u := range []string{echo.URL + "/hooks", broken} {
		_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: u})
		require.NoError(t, err)
	}

	record := func(customer uuid.UUID, phone string) {
		t.Helper()
		require.NoError(t, hooks.Record(ctx, s.pool, s.shop.ID, hooks.CustomerOptedOut, time.Now(),
			api.Customer{ID: customer, Phone: phone}))
		_, err := s.svc.Dispatch(ctx)
		require.NoError(t, err)
	}
	notAttempted := func(url string) []uuid.UUID {
		t.Helper()
		rows, err := s.pool.Query(ctx, `SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.last_attempt_at IS NULL AND d.status = 'pending' AND e.url LIKE $1`, url)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		require.NoError(t, err)
		return ids
	}
	attemptAll := func() {
		t.Helper()
		for _, id := range notAttempted("%") {
			_ = s.svc.Attempt(ctx, id, false) // the broken receiver's fail (a snooze until the next)
		}
	}
	holding := func(table, phone string) int {
		t.Helper()
		return s.count(`SELECT count(*) FROM `+table+` t WHERE t::text LIKE '%' || $1 || '%'`, phone[2:])
	}

	record(erased, erasedPhone)
	record(kept, keptPhone)
	attemptAll()
	for _, phone := range []string{erasedPhone, keptPhone} {
		require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_attempts WHERE response_head LIKE '%' || $1 || '%'`, phone),
			"the echo is kept with the attempt")
		require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_attempts WHERE error LIKE '%' || $1 || '%'`, phone),
			"the broken answer is quoted in the attempt's error")
		require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_deliveries WHERE last_error LIKE '%' || $1 || '%'`, phone))
	}

	// Another event of the customer, whose attempt is in flight (the request made, the
	// answer not yet recorded) when the erasure commits.
	record(erased, erasedPhone)
	inFlight := notAttempted(echo.URL + "%")
	require.Len(t, inFlight, 1)
	open := make(chan struct{})
	gate.Store(&open)
	done := make(chan error, 1)
	go func() { done <- s.svc.Attempt(ctx, inFlight[0], false) }()
	<-arrived
	require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return hooks.ForgetCustomer(ctx, tx, s.shop.ID, erased, "", time.Now())
	}))
	close(open)
	gate.Store(nil)
	require.NoError(t, <-done, "the echo answered 200")
	attemptAll() // the broken receiver's delivery of it: not sent any more

	var holders []string
	for _, table := range []string{"webhook_events", "webhook_deliveries", "webhook_attempts", "webhook_endpoints"} {
		if n := holding(table, erasedPhone); n > 0 {
			holders = append(holders, fmt.Sprintf("%s: %d rows", table, n))
		}
	}
	require.Empty(t, holders, "the erased customer's number is still kept")
	var head string
	var status int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT response_head, status_code FROM webhook_attempts WHERE delivery_id = $1`,
		inFlight[0]).Scan(&head, &status))
	require.Equal(t, http.StatusOK, status, "the attempt is logged, without the answer")
	require.Empty(t, head)
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_attempts WHERE error = 'not kept: the customer was erased'`))

	// The other customer's logs are untouched.
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_attempts WHERE response_head LIKE '%' || $1 || '%'`, keptPhone))
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_attempts WHERE error LIKE '%' || $1 || '%'`, keptPhone))
	require.Equal(t, 1, s.count(`SELECT count(*) FROM webhook_deliveries WHERE last_error LIKE '%' || $1 || '%'`, keptPhone))
}

// rawServer listens on loopback and calls serve with each connection it accepts (in a
// goroutine of its own), then closes the connection; it returns an endpoint URL. All
// of it ends with the test, connections kept alive by a client included.
func rawServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c, bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/hooks"
}

// readRequest reads one request and its body off a connection.
func readRequest(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	return req, body, err
}

// TestForgetCustomerScrubsADisableReason: an endpoint disabled automatically keeps the
// last error in its reason, and that error may quote the answer to a delivery of the
// customer's event (a receiver answering a broken line with the number it got). Erasing
// the customer keeps the reason and drops the quote.
func TestForgetCustomerScrubsADisableReason(t *testing.T) {
	t.Parallel()
	// Disabled at its second failed attempt: the first starts the failing, the second
	// is older than DisableAfter.
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true, DisableAfter: time.Nanosecond})
	ctx := context.Background()
	const phone = "+15550007392"
	erased := uuid.New()
	broken := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		_, body, err := readRequest(br)
		if err != nil {
			return
		}
		var ev struct {
			Data struct{ Phone string } `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		_, _ = io.WriteString(c, "unknown-caller:"+ev.Data.Phone+"\r\n")
	})
	_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: broken})
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, hooks.Record(ctx, s.pool, s.shop.ID, hooks.CustomerOptedOut, time.Now(),
			api.Customer{ID: erased, Phone: phone}))
		_, err := s.svc.Dispatch(ctx)
		require.NoError(t, err)
		rows, err := s.pool.Query(ctx, `SELECT id FROM webhook_deliveries WHERE last_attempt_at IS NULL`)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		require.NoError(t, err)
		require.Len(t, ids, 1)
		_ = s.svc.Attempt(ctx, ids[0], false) // fails: a snooze until the next attempt
	}
	reason := func() string {
		var r string
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT COALESCE(disabled_reason, '') FROM webhook_endpoints`).Scan(&r))
		return r
	}
	require.Contains(t, reason(), "disabled automatically")
	require.Contains(t, reason(), phone[2:], "the reason quotes the last error")

	require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return hooks.ForgetCustomer(ctx, tx, s.shop.ID, erased, "", time.Now())
	}))
	require.NotContains(t, reason(), phone[2:], "the erased customer's number is still in the reason")
	require.Contains(t, reason(), "disabled automatically", "the reason stays, without the quote")
	require.Contains(t, reason(), "fix the endpoint, then enable it")
}
