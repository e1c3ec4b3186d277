package hooks_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/hooks"
)

// TestReceiverClosingAKeptAliveConnection: a receiver closes a kept-alive connection just
// as the next request arrives on it (its idle timeout fired: Node's http server closes
// idle connections after 5 s, many proxies as soon). That costs no attempt: every
// request carries Idempotency-Key (the webhook-id), so Go's Transport sends it again on
// a new connection, and both deliveries succeed on their first try.
func TestReceiverClosingAKeptAliveConnection(t *testing.T) {
	t.Parallel()
	s := newScene(t, hooks.Config{AllowPrivate: true, DevMode: true})
	ctx := context.Background()
	var (
		mu               sync.Mutex
		answered, closed []http.Header
	)
	closedOne := make(chan struct{}, 10)
	url := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		// The first request on a connection is answered, and the connection kept alive.
		req, _, err := readRequest(br)
		if err != nil {
			return
		}
		mu.Lock()
		answered = append(answered, req.Header)
		mu.Unlock()
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"); err != nil {
			return
		}
		// The next finds the receiver closing the connection, unanswered.
		req, _, err = readRequest(br)
		if err != nil {
			return // the client closed it
		}
		mu.Lock()
		closed = append(closed, req.Header)
		mu.Unlock()
		_ = c.Close()
		closedOne <- struct{}{}
	})
	_, _, err := s.svc.CreateEndpoint(ctx, s.shop.ID, hooks.NewEndpoint{URL: url})
	require.NoError(t, err)

	deliver := func(n int) {
		t.Helper()
		s.record(hooks.CustomerOptedOut, n)
		_, err := s.svc.Dispatch(ctx)
		require.NoError(t, err)
		var id uuid.UUID
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT id FROM webhook_deliveries WHERE status = 'pending'`).Scan(&id))
		if err := s.svc.Attempt(ctx, id, false); err != nil {
			var lastError string
			require.NoError(t, s.pool.QueryRow(ctx, `SELECT coalesce(last_error, '') FROM webhook_deliveries WHERE id = $1`, id).Scan(&lastError))
			t.Fatalf("delivery %d failed its first attempt: %s (%v)", n, lastError, err)
		}
	}
	deliver(1)
	deliver(2)
	select {
	case <-closedOne:
	case <-time.After(10 * time.Second):
		t.Fatal("the second delivery did not meet the receiver closing its connection")
	}

	require.Equal(t, 2, s.count(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded' AND attempts = 1`))
	require.Equal(t, 2, s.count(`SELECT count(*) FROM webhook_attempts WHERE status_code = 200 AND error IS NULL`))
	require.Equal(t, 2, s.count(`SELECT count(*) FROM webhook_attempts`), "no failed attempt logged")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, answered, 2, "delivery 1, and delivery 2 again on a new connection")
	require.Len(t, closed, 1)
	for _, h := range append(answered, closed...) {
		require.NotEmpty(t, h.Get("webhook-id"))
		require.Equal(t, h.Get("webhook-id"), h.Get("Idempotency-Key"), "the key is the webhook-id")
	}
	require.Equal(t, closed[0].Get("webhook-id"), answered[1].Get("webhook-id"), "the request sent again is delivery 2")
	require.NotEqual(t, answered[0].Get("webhook-id"), answered[1].Get("webhook-id"))
}
