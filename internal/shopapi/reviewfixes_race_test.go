package shopapi_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Was: two imports of the same phones in different orders deadlock in Postgres
// (INSERT ... ON CONFLICT in file order), and the loser gets a 500.
func TestConcurrentImportsDoNotDeadlock(t *testing.T) {
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	var lines []string
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("+1555%07d,n%d", 1000000+i, i))
	}
	rev := slices.Clone(lines)
	slices.Reverse(rev)
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/api/customers/import", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/csv")
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw[:min(len(raw), 200)])
	}
	for round := range 5 {
		_, err := e.pool.Exec(t.Context(), `DELETE FROM customers`)
		require.NoError(t, err)
		var wg sync.WaitGroup
		statuses := make([]string, 2)
		for i, ls := range [][]string{lines, rev} {
			wg.Go(func() {
				st, body := post("phone,name\n" + strings.Join(ls, "\n") + "\n")
				statuses[i] = fmt.Sprint(st, " ", body)
			})
		}
		wg.Wait()
		t.Logf("round %d: %q", round, statuses)
		for _, s := range statuses {
			require.True(t, strings.HasPrefix(s, "200"), s)
		}
	}
}
