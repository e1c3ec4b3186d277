package shopapi_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Was: a search that is not UTF-8 reaches Postgres and answers 500.
func TestInvalidUTF8SearchIsRefused(t *testing.T) {
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	req, _ := http.NewRequest(http.MethodGet, e.url+"/api/customers?q=%C3", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	t.Logf("answer %d %s", res.StatusCode, raw)
	require.Less(t, res.StatusCode, 500)
}
