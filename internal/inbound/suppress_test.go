package inbound_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/inbound"
)

// TestAStrangersStopOutlivesTheirAdding: a STOP from a number that is not (yet) a
// customer is kept, so that a later POST /api/customers or import of the number does
// not opt it in. Adding or importing the number then keeps it opted
// out, whatever the owner says, until the number's own START; a START from a
// non-customer clears it, so a later add may opt them in. Nothing kept holds the number
// in the clear.
func TestAStrangersStopOutlivesTheirAdding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 0)
	text := func(sid, from, body string) inbound.Answer {
		t.Helper()
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: body})
		require.NoError(t, err)
		return ans
	}
	const added, imported, restarted = "+447700955501", "+447700955502", "+447700955503"
	for i, n := range []string{added, imported, restarted} {
		require.Equal(t, inbound.OutcomeOptedOut, text("SMstop"+string(rune('a'+i)), n, "STOP").Outcome)
	}
	require.Equal(t, inbound.OutcomeOptedIn, text("SMstart", restarted, "START").Outcome)

	// Added by the owner, opted in: kept opted out.
	c, err := w.customers.Add(ctx, w.shop.ID, customers.NewCustomer{Phone: added, Name: "Ada", SMSOptIn: true})
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, c.Status(), "a number that said STOP is added opted out")
	_, err = w.customers.Update(ctx, w.shop.ID, c.ID, customers.Change{SMSOptIn: ptrTo(true)})
	require.ErrorIs(t, err, customers.ErrOptedOut, "only their own START opts them back in")

	// Imported with consent: kept opted out, and the report says why.
	rep, err := w.customers.Import(ctx, w.shop.ID, strings.NewReader("phone,name,sms_opt_in\n"+imported+",Bea,yes\n"+restarted+",Cy,yes\n"))
	require.NoError(t, err)
	require.Equal(t, 2, rep.Created, "%+v", rep)
	require.Contains(t, rep.Rows[0].Reason, "STOP", "%+v", rep.Rows[0])
	bea, err := w.customers.Get(ctx, w.shop.ID, rep.Rows[0].CustomerID)
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedOut, bea.Status())

	// The number that said START afterwards is imported as the file says.
	cy, err := w.customers.Get(ctx, w.shop.ID, rep.Rows[1].CustomerID)
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedIn, cy.Status(), "%+v", rep.Rows[1])

	// Their own START, now as customers, opts them in.
	require.Equal(t, inbound.OutcomeOptedIn, text("SMstart2", added, "START").Outcome)
	c, err = w.customers.Get(ctx, w.shop.ID, c.ID)
	require.NoError(t, err)
	require.Equal(t, customers.StatusOptedIn, c.Status())

	// The record keeps no number in the clear.
	var clear int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM sms_suppressions s
		WHERE position(convert_to($1, 'UTF8') IN s.phone_hmac) > 0 OR position(convert_to($2, 'UTF8') IN s.phone_hmac) > 0`,
		imported, strings.TrimPrefix(imported, "+")).Scan(&clear))
	require.Zero(t, clear)
}

func ptrTo[T any](v T) *T { return &v }
