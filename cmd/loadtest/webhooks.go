package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/slotrecovery/slotrecovery/internal/testkit/loadkit"
)

// The -webhooks option: every shop of the run registers an outbound webhook endpoint at
// a local receiver that answers as a shop's own system may: at once (fast), slowly or
// hugely, so that runs with each, and one without, measure what webhooks cost the YES
// path (fast: the events and their deliveries) and what a bad receiver adds (slow,
// huge, against fast). Events
// are recorded in the YES's own statement, and delivered by River jobs on a queue of
// their own, each instance holding at most a few attempts to one endpoint: by design
// the YES path should not notice.

// The receiver's ways of answering.
const (
	webhooksFast = "fast" // 204 at once
	webhooksSlow = "slow" // waits -webhook-delay, then 204
	webhooksHuge = "huge" // answers 200 with -webhook-size bytes
)

// webhookReceiver is the endpoint every shop registers.
type webhookReceiver struct {
	mode     string
	delay    time.Duration
	size     int
	url      string
	srv      *http.Server
	requests atomic.Int64 // deliveries received
	answered atomic.Int64 // answered to the end (the slow wait done, the huge body written)
	bytes    atomic.Int64 // event bodies received
}

// startWebhookReceiver listens on loopback; it stops with close.
func startWebhookReceiver(mode string, delay time.Duration, size int) (*webhookReceiver, error) {
	if mode != webhooksFast && mode != webhooksSlow && mode != webhooksHuge {
		return nil, fmt.Errorf("-webhooks must be %s, %s or %s", webhooksFast, webhooksSlow, webhooksHuge)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &webhookReceiver{mode: mode, delay: delay, size: size, url: "http://" + ln.Addr().String() + "/hooks/"}
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = 'x'
	}
	w.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.requests.Add(1)
		n, _ := io.Copy(io.Discard, r.Body)
		w.bytes.Add(n)
		switch w.mode {
		case webhooksFast:
			rw.WriteHeader(http.StatusNoContent)
		case webhooksSlow:
			select {
			case <-time.After(w.delay):
			case <-r.Context().Done():
				return
			}
			rw.WriteHeader(http.StatusNoContent)
		case webhooksHuge:
			rw.Header().Set("Content-Type", "text/plain")
			rw.Header().Set("Content-Length", strconv.Itoa(w.size))
			rw.WriteHeader(http.StatusOK)
			for left := w.size; left > 0; left -= len(chunk) {
				if _, err := rw.Write(chunk[:min(left, len(chunk))]); err != nil {
					return // the server read what it wanted and hung up
				}
			}
		}
		w.answered.Add(1)
	})}
	go func() {
		if err := w.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			say("webhook receiver stopped: %v", err)
		}
	}()
	return w, nil
}

func (w *webhookReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = w.srv.Shutdown(ctx)
	_ = w.srv.Close()
}

// describe says what the receiver got, for the run's output.
func (w *webhookReceiver) describe() string {
	how := fmt.Sprintf("answering after %s", w.delay)
	switch w.mode {
	case webhooksFast:
		how = "answering at once"
	case webhooksHuge:
		how = fmt.Sprintf("answering %d MiB", w.size>>20)
	}
	return fmt.Sprintf("webhook receiver (%s, %s): %d deliveries received (%d KiB of events), %d answered to the end",
		w.mode, how, w.requests.Load(), w.bytes.Load()>>10, w.answered.Load())
}

// subscribe registers the receiver as the shop's webhook endpoint, for every event
// type, when the run has one (-webhooks).
func (h *harness) subscribe(ctx context.Context, base string, shop loadkit.Shop) error {
	if h.webhooks == nil {
		return nil
	}
	return h.drive.API(ctx, base, http.MethodPost, "/api/webhook_endpoints", shop.APIKey, "", map[string]any{
		"url": h.webhooks.url + shop.ID, "description": "loadtest receiver (" + h.webhooks.mode + ")",
	}, nil)
}
