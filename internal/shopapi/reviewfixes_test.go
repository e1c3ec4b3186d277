package shopapi_test

// Findings of the review of the owners' features, each a test that failed before its
// fix.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Was: PATCH /api/shop clamps min_lead_minutes at 2^32 (creation clamps at 2^26),
// so 307445735 minutes overflows time.Duration to ~26 s and is stored as 0.
func TestPatchRefusesAnOverflowingLeadTime(t *testing.T) {
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	r := e.do(http.MethodPatch, "/api/shop", key, map[string]any{
		"offer_policy": map[string]any{"min_lead_minutes": 307445735}})
	t.Logf("PATCH answered %d %s", r.status, r.raw)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "creation refuses this value; PATCH must too")
}

// Was: a customer who replied STOP, then was erased by the owner, comes back opted
// in from a CSV re-import (and from POST /api/customers): the owner bypasses STOP.
func TestAnErasedNumberComesBackOptedOut(t *testing.T) {
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	id := e.customer(key, map[string]any{"phone": "+15555550123", "name": "Ann", "sms_opt_in": true})
	_, err := e.pool.Exec(context.Background(), `UPDATE customers SET opted_out_at = now() WHERE id = $1`, id) // STOP
	require.NoError(t, err)
	// The owner cannot opt her in...
	r := e.do(http.MethodPatch, "/api/customers/"+id, key, map[string]any{"sms_opt_in": true})
	require.Equal(t, http.StatusConflict, r.status)
	// ...but can erase and re-import her.
	require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/api/customers/"+id, key, nil).status)
	r = e.importCSV(key, "phone,name,sms_opt_in\n+15555550123,Ann,yes\n")
	require.Equal(t, http.StatusOK, r.status, r.raw)
	t.Logf("re-import: %s", r.raw)
	st := e.queryString(`SELECT sms_opt_in::text || '/' || (opted_out_at IS NOT NULL)::text FROM customers WHERE phone = '+15555550123' AND erased_at IS NULL`)
	require.Equal(t, "false/true", st, "a STOP'd number must not come back opted in (got sms_opt_in/opted_out = %s)", st)
}

// Was: a multipart upload cut short (no closing boundary) is a 500, not a 4xx.
func TestACutOffUploadIsTheClientsFault(t *testing.T) {
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	body := "--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\nContent-Type: text/csv\r\n\r\nphone\n+15555550123\n"
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/customers/import", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=XX")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	t.Logf("answer %d %s", res.StatusCode, raw)
	require.Less(t, res.StatusCode, 500, "a malformed upload is the client's fault")
}

// Was: an import that updates a customer while the owner erases her puts her name
// (and consent, preferences) back on the erased row: the updated CTE lacks
// "erased_at IS NULL", which READ COMMITTED's recheck would have honoured.
func TestAnImportRacingAnErasureLeavesItErased(t *testing.T) {
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	id := e.customer(key, map[string]any{"phone": "+15555550123", "name": "Ann", "sms_opt_in": true})
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	// The erase, as CustomerErase does it, not yet committed.
	_, err = tx.Exec(ctx, `UPDATE customers SET name = '', phone = '', sms_opt_in = false, opted_out_at = now(), erased_at = now() WHERE id = $1`, id)
	require.NoError(t, err)
	done := make(chan string)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/api/customers/import", strings.NewReader("phone,name,priority\n+15555550123,Ann Smith,5\n"))
		req.Header.Set("Content-Type", "text/csv")
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err.Error()
			return
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- fmt.Sprint(res.StatusCode, " ", string(raw))
	}()
	time.Sleep(500 * time.Millisecond) // the import's UPDATE now waits on the row lock
	require.NoError(t, tx.Commit(ctx))
	t.Logf("import: %s", <-done)
	got := e.queryString(`SELECT name || '|' || phone || '|' || (erased_at IS NOT NULL)::text FROM customers WHERE id = $1`, id)
	require.Equal(t, "||true", got, "the erased row must stay without a name")
}

// Finding (low): an unterminated quote swallows every later line: they are neither

// Was: a quote that never closes swallowed the rest of the file, and its lines appeared
// nowhere in the report. Each is now reported.
func TestAnUnterminatedQuoteReportsEveryLine(t *testing.T) {
	e := newEnv(t)
	_, key := e.shop("+15555550100")
	r := e.importCSV(key, "phone,name\n+15555550101,\"Ann\n+15555550102,Bob\n+15555550103,Cy\n")
	require.Equal(t, http.StatusOK, r.status, r.raw)
	rows := r.body["rows"].([]any)
	require.Len(t, rows, 3, "every line of the file appears in the report: %s", r.raw)
	for i, row := range rows {
		m := row.(map[string]any)
		require.Equal(t, "rejected", m["result"])
		require.EqualValues(t, i+2, m["line"])
		require.Contains(t, m["reason"], "never closes")
	}
}
