package shopapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCustomerMoveUp: the move_up preference is false unless asked for, is set on
// create, changed by PATCH (null refused with 422, left out unchanged), read back by GET
// and the list, and set by a CSV import's move_up column (empty: unchanged; anything
// but yes or no rejects the line).
func TestCustomerMoveUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.shop("+15555550100")

	r := e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550123"})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, false, r.body["move_up"], "no move-up offers unless asked for")
	plain := r.body["id"].(string)

	r = e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550124", "move_up": true})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	require.Equal(t, true, r.body["move_up"])
	mover := r.body["id"].(string)
	require.Equal(t, 1, e.queryInt("SELECT count(*) FROM customers WHERE id = $1 AND move_up", mover))

	r = e.do(http.MethodPatch, "/api/customers/"+plain, key, map[string]any{"move_up": true})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, true, r.body["move_up"])
	r = e.do(http.MethodPatch, "/api/customers/"+plain, key, map[string]any{"name": "Ada"})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, true, r.body["move_up"], "left out: unchanged")
	r = e.do(http.MethodPatch, "/api/customers/"+plain, key, map[string]any{"move_up": nil})
	requireError(t, r, http.StatusUnprocessableEntity, "invalid_move_up")
	r = e.do(http.MethodPatch, "/api/customers/"+mover, key, map[string]any{"move_up": false})
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, false, r.body["move_up"])
	r = e.do(http.MethodGet, "/api/customers/"+plain, key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, true, r.body["move_up"])

	r = e.importCSV(key, "phone,name,move_up\n"+
		"+15555550124,Bo,yes\n"+ // line 2: turned on
		"+15555550123,Ada,\n"+ // line 3: empty keeps it on (nothing else changes)
		"+15555550125,Cy,\n"+ // line 4: new, empty: off
		"+15555550126,Di,maybe\n") // line 5: rejected
	require.Equal(t, http.StatusOK, r.status, r.raw)
	results := map[float64]string{}
	for _, x := range r.body["rows"].([]any) {
		m := x.(map[string]any)
		results[m["line"].(float64)] = m["result"].(string)
	}
	require.Equal(t, map[float64]string{2: "updated", 3: "unchanged", 4: "created", 5: "rejected"}, results, r.raw)
	require.Equal(t, 2, e.queryInt("SELECT count(*) FROM customers WHERE move_up"))
	require.Equal(t, 1, e.queryInt("SELECT count(*) FROM customers WHERE phone = '+15555550125' AND NOT move_up"))

	r = e.do(http.MethodGet, "/api/customers", key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	on := 0
	for _, x := range r.body["customers"].([]any) {
		if x.(map[string]any)["move_up"] == true {
			on++
		}
	}
	require.Equal(t, 2, on, r.raw)
}
