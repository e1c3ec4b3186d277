package loadkit

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConnectLeavesOneConnectionPerRequestInFlight: after Connect, a burst of as many
// requests as connections were opened, round robin over the servers, opens no new
// connection; without it, the same burst opens one for (nearly) every request.
func TestConnectLeavesOneConnectionPerRequestInFlight(t *testing.T) {
	t.Parallel()
	const n = 60
	var bases []string
	var opened []*atomic.Int64
	var inside sync.WaitGroup // the burst's requests all wait for each other inside the servers
	for range 2 {
		var count atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				inside.Done()
				waitAll(t, &inside)
			}
			_, _ = w.Write([]byte("ok"))
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				count.Add(1)
			}
		}
		srv.Start()
		t.Cleanup(srv.Close)
		bases, opened = append(bases, srv.URL), append(opened, &count)
	}
	total := func() int64 { return opened[0].Load() + opened[1].Load() }
	burst := func(d *Driver) {
		inside.Add(n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := d.send(context.Background(), bases[i%len(bases)], "", "")
				assert.NoError(t, a.Err)
			}()
		}
		wg.Wait()
	}

	cold := &Driver{Client: NewClient()}
	burst(cold)
	require.EqualValues(t, n, total(), "a burst on a new client opens a connection per request")

	// Connect's requests set out one after another (each a little later than the one
	// before, as a thousand goroutines do on two cores): none may reuse a connection an
	// earlier one has finished with.
	warm := &Driver{Client: NewClient()}
	var started atomic.Int64
	transport := warm.Client.Transport
	warm.Client.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		time.Sleep(time.Duration(started.Add(1)) * time.Millisecond)
		return transport.RoundTrip(r)
	})
	require.Equal(t, n, warm.Connect(context.Background(), bases, n))
	warm.Client.Transport = transport
	require.EqualValues(t, 2*n, total(), "Connect opens n connections of its own")
	require.Equal(t, opened[0].Load(), opened[1].Load(), "round robin: as many to each server")
	burst(warm)
	require.EqualValues(t, 2*n, total(), "the burst after Connect opened none")

	// An answer without a body gives its connection back before the others have come:
	// Connect cannot promise a connection per request, and says so.
	bodiless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(bodiless.Close)
	require.Zero(t, (&Driver{Client: NewClient()}).Connect(context.Background(), []string{bodiless.URL}, 10))
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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
