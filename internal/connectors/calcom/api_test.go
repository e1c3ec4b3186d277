package calcom_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors"
	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
)

// TestMoveRequest: a move is cal.com API v2's reschedule, with the key as a bearer
// token and the cal-api-version the bookings endpoints need; the answer's data.uid is
// the new booking; an error is cal.com's own words, and never the key.
func TestMoveRequest(t *testing.T) {
	t.Parallel()
	to := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer cal_test_good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":"error","timestamp":"2026-11-30T10:00:00.000Z","path":"/v2/bookings/old/reschedule","error":{"code":"UnauthorizedException","message":"Invalid API Key"}}`))
			return
		}
		require.Equal(t, http.MethodPost, r.Method)
		require.Equal(t, "/v2/bookings/bFJeNb2uX8ANpT3JL5EfXw/reschedule", r.URL.Path)
		require.Equal(t, "2024-08-13", r.Header.Get("cal-api-version"))
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		var in map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&in))
		require.Equal(t, "2026-12-01T15:00:00.000Z", in["start"])
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"status":"success","data":{"id":1091,"uid":"newUid123","title":"Cut","status":"accepted",
			"start":"2026-12-01T15:00:00.000Z","end":"2026-12-01T15:45:00.000Z","duration":45,"rescheduledFromUid":"bFJeNb2uX8ANpT3JL5EfXw"}}`))
	}))
	t.Cleanup(srv.Close)
	c := calcom.NewClient(srv.URL, nil)
	m, err := c.Move(context.Background(), "cal_test_good", connectors.Move{ExternalID: "bFJeNb2uX8ANpT3JL5EfXw", To: to})
	require.NoError(t, err)
	require.Equal(t, connectors.Moved{ExternalID: "newUid123"}, m)

	_, err = c.Move(context.Background(), "cal_test_revoked", connectors.Move{ExternalID: "bFJeNb2uX8ANpT3JL5EfXw", To: to})
	var ve *connectors.VendorError
	require.True(t, errors.As(err, &ve))
	require.Equal(t, 401, ve.Status)
	require.True(t, ve.Permanent())
	require.Equal(t, "Invalid API Key", ve.Message)
	require.NotContains(t, err.Error(), "cal_test_revoked")
}
