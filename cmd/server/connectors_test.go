package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/connectors/calcom"
)

// TestConnectorAcrossInstances: a cal.com connector made through one instance verifies
// its deliveries on another (its secret is sealed under the setting both share, not a
// key of one process), a delivery larger than the API's 64 KiB is taken (the webhooks'
// own limit), and the cancellation becomes the shop's opening.
func TestConnectorAcrossInstances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.start(nil, nil), e.start(nil, nil)
	shop := e.newShop(a, "none", nil)

	var conn struct {
		ID         string `json:"id"`
		WebhookURL string `json:"webhook_url"`
		Secret     string `json:"secret"`
	}
	require.Equal(t, http.StatusCreated, e.api(a, http.MethodPost, "/api/connectors", shop.APIKey, map[string]any{"kind": "calcom"}, &conn))
	require.Equal(t, publicURL+"/webhooks/calcom/"+conn.ID, conn.WebhookURL)
	path := strings.TrimPrefix(conn.WebhookURL, publicURL)

	raw, err := os.ReadFile("../../internal/connectors/calcom/testdata/booking_cancelled.json")
	require.NoError(t, err)
	day := time.Now().UTC().AddDate(0, 0, 3).Format("2006-01-02")
	body := append([]byte(strings.ReplaceAll(string(raw), "2026-12-01", day)), bytes.Repeat([]byte(" "), 100<<10)...)

	post := func(base, sig string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(calcom.SignatureHeader, sig)
		res, err := e.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(out)
	}
	status, out := post(b, calcom.Sign("wrong", body))
	require.Equal(t, http.StatusUnauthorized, status, out)
	require.Contains(t, out, `"code":"bad_signature"`)

	status, out = post(b, calcom.Sign(conn.Secret, body))
	require.Equal(t, http.StatusOK, status, out)
	require.Contains(t, out, `"result":"applied"`)
	status, out = post(a, calcom.Sign(conn.Secret, body))
	require.Equal(t, http.StatusOK, status, out)
	require.Contains(t, out, `"result":"duplicate"`)

	var list struct {
		Openings []struct {
			Status string `json:"status"`
		} `json:"openings"`
	}
	require.Equal(t, http.StatusOK, e.api(a, http.MethodGet, "/api/openings", shop.APIKey, nil, &list))
	require.Len(t, list.Openings, 1, "the cancellation declared its opening")
	var got struct {
		LastDelivery struct {
			Result string `json:"result"`
			Event  string `json:"event"`
		} `json:"last_delivery"`
	}
	require.Equal(t, http.StatusOK, e.api(b, http.MethodGet, "/api/connectors/"+conn.ID, shop.APIKey, nil, &got))
	require.Equal(t, "duplicate", got.LastDelivery.Result)
	require.Equal(t, "BOOKING_CANCELLED", got.LastDelivery.Event)
}
