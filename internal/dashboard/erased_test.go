package dashboard_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/ledger"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// TestErasedCustomerInFilledSlots: a slot filled by a customer the shop then erased
// still counts and is listed, named "(erased)" on the page and in the export, not
// "(no name)" (which stays for a customer who never gave a name), and without a phone.
func TestErasedCustomerInFilledSlots(t *testing.T) {
	t.Parallel()
	en := newEnv(t, envOpts{now: wednesday})
	ny := en.shopA.Location
	gone := en.addCustomer(t, en.shopA, "+15555550177", "Erin Erased")
	nameless := en.addCustomer(t, en.shopA, "+15555550178", "")
	first := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 20, 10, 0, 0, 0, ny), wednesday, "Cut", 3000, slots.StatusOpen)
	book(t, en.pool, first, gone.ID, ledger.BookingConfirmed, 3000, wednesday)
	second := insertOpening(t, en.pool, en.shopA.ID, time.Date(2026, 11, 21, 10, 0, 0, 0, ny), wednesday, "Shave", 2000, slots.StatusOpen)
	book(t, en.pool, second, nameless.ID, ledger.BookingConfirmed, 2000, wednesday.Add(time.Minute))
	require.NoError(t, en.erasure.Erase(context.Background(), en.shopA.ID, gone.ID))
	ck := en.login(t, en.keyA)

	body, _ := en.page(t, ck, "/dashboard")
	row := func(id uuid.UUID) string {
		i := strings.Index(body, `data-opening="`+id.String()+`"`)
		require.Positive(t, i, "the filled slot is listed")
		return body[i : i+strings.Index(body[i:], "</tr>")]
	}
	assert.Contains(t, row(first), "(erased)")
	assert.NotContains(t, row(first), "(no name)")
	assert.NotContains(t, row(first), "Erin")
	assert.NotContains(t, row(first), "******", "no phone, not even masked")
	assert.Contains(t, row(second), "(no name)")
	assert.Contains(t, row(second), "+155******78")
	assert.Contains(t, body, "$50.00", "the erased customer's booking still counts")

	rec := en.get("/dashboard/export.csv?from=2026-11-01&to=2026-11-30", ck)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{first.String(), "Cut", "(erased)", ""}, []string{rows[1][0], rows[1][5], rows[1][6], rows[1][7]})
	assert.Equal(t, []string{second.String(), "Shave", "", "+155******78"}, []string{rows[2][0], rows[2][5], rows[2][6], rows[2][7]})
	assert.NotContains(t, rec.Body.String(), "Erin")
	assert.NotContains(t, rec.Body.String(), "+15555550177")
}
