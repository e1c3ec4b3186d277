package shopapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestReassignedChecked: a customer whose number answered "wrong number" reads
// possibly_reassigned_at in the API until the owner says they checked it (idempotent);
// the opt-out stays; another shop's key gets 404 and changes nothing.
func TestReassignedChecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	_, otherKey := e.shop("+15555550101")
	r := e.do(http.MethodPost, "/api/customers", key, map[string]any{"phone": "+15555550123", "name": "Ada", "sms_opt_in": true})
	require.Equal(t, http.StatusCreated, r.status, r.raw)
	id := r.body["id"].(string)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 15, 30, 0, 0, time.UTC)
	require.NoError(t, pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		return e.h.Customers.MarkPossiblyReassigned(ctx, tx, uuid.MustParse(shopID), "+15555550123", at)
	}))
	require.NoError(t, e.h.Customers.OptOutNumber(ctx, uuid.MustParse(shopID), "+15555550123"))

	r = e.do(http.MethodGet, "/api/customers/"+id, key, nil)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "2026-11-20T15:30:00Z", r.body["possibly_reassigned_at"])

	r = e.do(http.MethodPost, "/api/customers/"+id+"/reassigned_checked", otherKey, nil)
	require.Equal(t, http.StatusNotFound, r.status, r.raw)
	r = e.do(http.MethodGet, "/api/customers/"+id, key, nil)
	require.NotNil(t, r.body["possibly_reassigned_at"], "another shop's key changed nothing")

	for range 2 {
		r = e.do(http.MethodPost, "/api/customers/"+id+"/reassigned_checked", key, nil)
		require.Equal(t, http.StatusOK, r.status, r.raw)
		require.Nil(t, r.body["possibly_reassigned_at"])
		require.Equal(t, true, r.body["opted_out"], "the opt-out stays: only the number's own START ends it")
	}
	r = e.do(http.MethodPost, "/api/customers/"+uuid.NewString()+"/reassigned_checked", key, nil)
	require.Equal(t, http.StatusNotFound, r.status, r.raw)
}
