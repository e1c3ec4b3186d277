package stripe_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/payments/stripe"
	"github.com/slotrecovery/slotrecovery/internal/testkit/stripetest"
)

// TestConcurrentCheckoutsKeepTheirConnections: the winners of a storm ask Stripe for
// their links at once. The connections those calls opened stay open for the next
// storm's, instead of all but two being closed (net/http's default per host) and
// opened again, a TCP and TLS handshake on a winner's path each time.
func TestConcurrentCheckoutsKeepTheirConnections(t *testing.T) {
	t.Parallel()
	const burst = 16
	upstream, err := url.Parse(stripetest.Mock(t))
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	var inside sync.WaitGroup // each burst's calls wait for each other at the proxy
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside.Done()
		waitAll(t, &inside)
		proxy.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	c, err := stripe.New(stripe.Config{SecretKey: "sk_test_slotrecovery", APIURL: srv.URL})
	require.NoError(t, err)
	storm := func(n int) {
		inside.Add(burst)
		var wg sync.WaitGroup
		for i := range burst {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.CreateCheckout(context.Background(), checkoutRequest("storm-"+strconv.Itoa(n)+"-"+strconv.Itoa(i)))
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
	}
	storm(1)
	require.EqualValues(t, burst, opened.Load(), "the first storm's calls, all at once, each opened a connection")
	storm(2)
	require.EqualValues(t, burst, opened.Load(), "the second storm opened none: it used the first storm's connections")
}

// waitAll waits for wg, or fails the test after 10 s: a request that never reached the
// server must not leave the others waiting for it for good.
func waitAll(t *testing.T, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("the burst's other requests never arrived")
	}
}
