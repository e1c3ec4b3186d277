package square_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/square"
)

// TestMoveRequests: a move reads the booking for its version and updates it with that
// version and an idempotency key of the move and the version (Square-Version and the
// bearer token on each); VERSION_MISMATCH reads it again; a booking already at the new
// time is the move made; a cancelled one is refused for good.
func TestMoveRequests(t *testing.T) {
	t.Parallel()
	to := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	var (
		mu      sync.Mutex
		version int64 = 3
		start         = "2026-12-04T18:00:00Z"
		status        = "ACCEPTED"
		keys    []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, "Bearer EAAAtoken", r.Header.Get("Authorization"))
		require.Equal(t, square.APIVersion, r.Header.Get("Square-Version"))
		require.Equal(t, "/v2/bookings/z4r1xkq9b2m7np", r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPut {
			var in struct {
				IdempotencyKey string `json:"idempotency_key"`
				Booking        struct {
					Version int64  `json:"version"`
					StartAt string `json:"start_at"`
				} `json:"booking"`
			}
			require.NoError(t, json.NewDecoder(r.Body).Decode(&in))
			keys = append(keys, in.IdempotencyKey)
			if len(keys) == 1 {
				version++ // someone else's change came first
			}
			if in.Booking.Version != version {
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"errors":[{"category":"INVALID_REQUEST_ERROR","code":"VERSION_MISMATCH","detail":"Booking version mismatch."}]}`))
				return
			}
			version++
			start = in.Booking.StartAt
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"booking": map[string]any{"id": "z4r1xkq9b2m7np", "version": version,
			"status": status, "start_at": start}})
	}))
	t.Cleanup(srv.Close)
	c := square.NewClient(srv.URL, nil)
	mv := connectors.Move{ExternalID: "z4r1xkq9b2m7np", To: to, Key: "move-1"}
	m, err := c.Move(context.Background(), "EAAAtoken", mv)
	require.NoError(t, err)
	require.Equal(t, connectors.Moved{ExternalID: "z4r1xkq9b2m7np", Version: 5}, m)
	require.Equal(t, []string{"move-1:3", "move-1:4"}, keys, "one key per version read")

	m, err = c.Move(context.Background(), "EAAAtoken", mv)
	require.NoError(t, err)
	require.Equal(t, int64(5), m.Version, "already at the new time: nothing written again")
	require.Len(t, keys, 2)

	mu.Lock()
	status, start = "CANCELLED_BY_CUSTOMER", "2026-12-05T18:00:00Z"
	mu.Unlock()
	_, err = c.Move(context.Background(), "EAAAtoken", mv)
	var ve *connectors.VendorError
	require.True(t, errors.As(err, &ve))
	require.True(t, ve.Permanent())
}
