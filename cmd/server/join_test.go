package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var joinCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestJoinPageWired: the join page answers at /join/<slug> of a shop the API made, and
// its per-address limit counts the client TRUSTED_PROXIES finds: behind the trusted
// proxy, six visitors each get their confirmation; one visitor submitting six numbers
// gets five (the default allowance), and the sixth reads the same answer. Every
// refusal is counted on /metrics by reason.
func TestJoinPageWired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := e.start(map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32, ::1/128"}, fastTune)
	shop := e.newShop(base, "none", nil)
	var slug string
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT slug FROM shops WHERE id = $1`, shop.ID).Scan(&slug))
	require.True(t, strings.HasPrefix(slug, "joe-s-barbers"), slug)

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar}
	page := base + "/join/" + slug
	res, err := c.Get(page)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'none'")
	token := joinCSRF.FindStringSubmatch(string(body))[1]

	submit := func(from string, i int) string {
		form := url.Values{"csrf": {token}, "name": {"Ana"}, "phone": {fmt.Sprintf("+1555%07d", 7000000+i)},
			"language": {"en"}, "consent": {"yes"}}
		req, err := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", from)
		res, err := c.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, string(b))
		return string(b)
	}
	var first string
	for i := range 6 {
		got := submit(fmt.Sprintf("198.51.100.%d", i+1), i)
		if i == 0 {
			first = got
		}
		require.Equal(t, first, got)
	}
	require.Equal(t, 6, e.count(`SELECT count(*) FROM join_requests WHERE shop_id = $1`, shop.ID))
	for i := range 6 {
		require.Equal(t, first, submit("198.51.100.200", 10+i))
	}
	require.Equal(t, 11, e.count(`SELECT count(*) FROM join_requests WHERE shop_id = $1`, shop.ID))

	res, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(metrics), `slotrecovery_join_refused_total{reason="ip"} 1`)
}
