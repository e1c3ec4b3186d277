package shopapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/book"
	"github.com/slotrecovery/slotrecovery/internal/slots"
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

// TestMoveUpAgainstCancelOverHTTP: a customer's YES to a move-up (the book's MoveUp)
// and the owner's cancellation of the same appointment over HTTP, at once, leave one
// consistent book, as the API shows it: moved (the cancel answered 409
// appointment_not_booked, the earlier opening filled, the freed time an opening whose
// chain is position 1 from the moved appointment) or cancelled (the cancel answered 200,
// the earlier opening still open, nobody booked).
func TestMoveUpAgainstCancelOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shopID, key := e.shop("+15555550100")
	ctx := context.Background()
	customer := e.customer(key, map[string]any{"phone": "+15555550123", "name": "Ada", "sms_opt_in": true, "move_up": true})
	shop, err := e.h.Shops.Get(ctx, uuid.MustParse(shopID))
	require.NoError(t, err)
	outcomes := map[string]int{}
	for i := range 8 {
		appt := e.putAppointment(key, fmt.Sprint("crm-", i), appointment(future(time.Duration(96+i)*time.Hour)))
		require.Equal(t, http.StatusCreated, appt.status, appt.raw)
		apptID := appt.body["id"].(string)
		op := e.do(http.MethodPost, "/api/openings", key, amend(validOpening(), map[string]any{"starts_at": future(time.Duration(24+i) * time.Hour)}))
		require.Equal(t, http.StatusCreated, op.status, op.raw)
		opID := op.body["id"].(string)
		_, err := e.pool.Exec(ctx, `
			INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at, move_from)
			SELECT id, $2, shop_id, generation, 1, 'sent', now(), now(), $3 FROM slot_openings WHERE id = $1`, opID, customer, apptID)
		require.NoError(t, err)
		claims, err := e.h.Openings.Claimable(ctx, &shop, uuid.MustParse(customer))
		require.NoError(t, err)
		// This round's offer (an earlier round's stays live when its cancel won).
		k := slices.IndexFunc(claims.Live, func(o slots.LiveOffer) bool { return o.OpeningID.String() == opID })
		require.GreaterOrEqual(t, k, 0)
		offer := claims.Live[k]

		var move book.Move
		var moveErr error
		var cancelStatus int
		var cancelBody string
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; move, moveErr = e.h.Book.MoveUp(ctx, shop, uuid.MustParse(customer), offer) })
		wg.Go(func() {
			<-start
			req, err := http.NewRequest(http.MethodPost, e.url+"/api/appointments/"+apptID+"/cancel", nil)
			if err != nil {
				cancelBody = err.Error()
				return
			}
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				cancelBody = err.Error()
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			cancelStatus, cancelBody = res.StatusCode, string(b)
		})
		close(start)
		wg.Wait()
		require.NoError(t, moveErr)

		got := e.do(http.MethodGet, "/api/appointments/"+apptID, key, nil)
		require.Equal(t, http.StatusOK, got.status, got.raw)
		opening := e.do(http.MethodGet, "/api/openings/"+opID, key, nil)
		require.Equal(t, http.StatusOK, opening.status, opening.raw)
		outcomes[got.body["status"].(string)]++
		switch got.body["status"] {
		case "moved":
			require.Equal(t, http.StatusConflict, cancelStatus, cancelBody)
			require.Contains(t, cancelBody, "appointment_not_booked")
			require.Equal(t, slots.Booked, move.Claim.Outcome)
			require.Equal(t, "filled", opening.body["status"])
			freed := got.body["opening"].(map[string]any)
			require.Equal(t, "declared", freed["state"], got.raw)
			chained := e.do(http.MethodGet, "/api/openings/"+freed["id"].(string), key, nil)
			require.Equal(t, http.StatusOK, chained.status, chained.raw)
			require.Equal(t, map[string]any{"id": opID, "position": 1.0, "moved_from": apptID}, chained.body["chain"])
		case "cancelled":
			require.Equal(t, http.StatusOK, cancelStatus, cancelBody)
			require.NotEqual(t, slots.Booked, move.Claim.Outcome)
			require.Equal(t, "open", opening.body["status"])
			require.Nil(t, opening.body["booking"])
		default:
			t.Fatalf("appointment %s: %s", apptID, got.raw)
		}
		require.NotContains(t, opening.body, "chain", "the opening the owner declared starts no chain of its own")
	}
	t.Logf("outcomes: %v", outcomes)
}
