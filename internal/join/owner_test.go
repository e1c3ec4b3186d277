package join_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
)

// TestOwnersConsentOnRecord: the owner's opt-ins and opt-outs (an add, an update, a CSV
// import) are on the consent record as asserted by the owner, with how and by whom,
// in the customer's language (else the shop's); a change that does not touch the
// consent records nothing, a customer who comes in opted out (their number said STOP)
// asserts nothing, and a customer who joins by their own YES has only that on record.
func TestOwnersConsentOnRecord(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	type ev struct{ Kind, Method, By, Language string }
	history := func(id uuid.UUID) []ev {
		t.Helper()
		hist, err := f.join.History(ctx, f.shop.ID, id)
		require.NoError(t, err)
		var out []ev
		for _, e := range hist {
			require.True(t, e.AssertedByOwner, "%+v", e)
			require.Nil(t, e.Disclosure)
			require.Nil(t, e.Confirmation)
			out = append(out, ev{e.Kind, e.Method, e.AssertedBy, e.Language})
		}
		return out
	}

	// The API's add (the zero Source), opted in: one opt-in, by the API key.
	ana, err := f.customers.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550301", Name: "Ana", SMSOptIn: true})
	require.NoError(t, err)
	require.Equal(t, []ev{{"opt_in", "api", "api key", "en"}}, history(ana.ID))

	// Added without consent: nothing on record. The dashboard opts them in, then the
	// API out; a change of name records nothing.
	bo, err := f.customers.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550302", Name: "Bo", Language: language.Spanish})
	require.NoError(t, err)
	require.Empty(t, history(bo.ID))
	yes, no, name := true, false, "Bo B."
	_, err = f.customers.Update(ctx, f.shop.ID, bo.ID, customers.Change{SMSOptIn: &yes,
		Source: customers.Source{Method: customers.SourceDashboard, By: "owner@joes.example"}})
	require.NoError(t, err)
	_, err = f.customers.Update(ctx, f.shop.ID, bo.ID, customers.Change{SMSOptIn: &yes, Name: &name})
	require.NoError(t, err)
	_, err = f.customers.Update(ctx, f.shop.ID, bo.ID, customers.Change{SMSOptIn: &no})
	require.NoError(t, err)
	require.Equal(t, []ev{{"opt_in", "dashboard", "owner@joes.example", "es"}, {"opt_out", "api", "api key", "es"}}, history(bo.ID))
	_, err = f.customers.Update(ctx, f.shop.ID, bo.ID, customers.Change{SMSOptIn: &yes, Source: customers.Source{Method: "fax"}})
	require.Error(t, err, "a method the record does not know")

	// A CSV import: a new customer opted in, Bo opted back in, Ana opted out, a line
	// that changes nothing, a new one without consent.
	csv := "phone,name,sms_opt_in,language\n" +
		"+15555550303,Cy,yes,fr\n" +
		"+15555550302,,yes,\n" +
		"+15555550301,,no,\n" +
		"+15555550304,Di,,\n"
	rep, err := f.customers.Import(ctx, f.shop.ID, strings.NewReader(csv), customers.Source{By: "Mozilla/5.0 (Macintosh)"})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Created)
	require.Equal(t, 2, rep.Updated)
	cy, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550303")
	require.NoError(t, err)
	require.Equal(t, []ev{{"opt_in", "import", "Mozilla/5.0 (Macintosh)", "fr"}}, history(cy.ID))
	require.Equal(t, ev{"opt_in", "import", "Mozilla/5.0 (Macintosh)", "es"}, history(bo.ID)[2])
	require.Equal(t, []ev{{"opt_in", "api", "api key", "en"}, {"opt_out", "import", "Mozilla/5.0 (Macintosh)", "en"}}, history(ana.ID))
	di, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550304")
	require.NoError(t, err)
	require.Empty(t, history(di.ID))
	rep, err = f.customers.Import(ctx, f.shop.ID, strings.NewReader(csv))
	require.NoError(t, err)
	require.Equal(t, 4, rep.Unchanged, "the same file again changes nothing")
	require.Len(t, history(cy.ID), 1, "and records nothing")

	// A number that said STOP comes in opted out: the owner asserts nothing.
	require.NoError(t, f.customers.OptOutNumber(ctx, f.shop.ID, "+15555550305"))
	ed, err := f.customers.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550305", SMSOptIn: true})
	require.NoError(t, err)
	require.False(t, ed.SMSOptIn)
	require.Empty(t, history(ed.ID))

	// A number that joins by its own YES has that, and only that, on record.
	out, err := f.join.Request(ctx, f.shop, sub("+15555550306"))
	require.NoError(t, err)
	require.True(t, out.Sent)
	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: "+15555550306", Body: "YES", MessageSID: "SMown1"})
	require.NoError(t, err)
	require.True(t, handled)
	fay, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550306")
	require.NoError(t, err)
	hist, err := f.join.History(ctx, f.shop.ID, fay.ID)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	require.Equal(t, join.MethodPage, hist[0].Method)
	require.False(t, hist[0].AssertedByOwner)
}

// failingRecord is a consent record that cannot be written.
type failingRecord struct{}

func (failingRecord) RecordOwnerConsent(context.Context, pgx.Tx, []customers.ConsentChange) error {
	return errors.New("the record is unavailable")
}

// TestOwnersConsentWithItsChange: an owner's opt-in is never without its record: when
// the record cannot be written, the customer is not added, nor updated, nor imported.
func TestOwnersConsentWithItsChange(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	broken := customertest.NewWith(t, f.pool, customers.Config{Consent: failingRecord{}})
	_, err := broken.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550311", SMSOptIn: true})
	require.Error(t, err)
	_, err = f.customers.ByPhone(ctx, f.shop.ID, "+15555550311")
	require.Error(t, err, "not added")

	c, err := broken.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550312"})
	require.NoError(t, err, "no consent, nothing to record")
	yes := true
	_, err = broken.Update(ctx, f.shop.ID, c.ID, customers.Change{SMSOptIn: &yes})
	require.Error(t, err)
	_, err = broken.Import(ctx, f.shop.ID, strings.NewReader("phone,sms_opt_in\n+15555550312,yes\n+15555550313,yes\n"))
	require.Error(t, err)
	got, err := f.customers.ByPhone(ctx, f.shop.ID, "+15555550312")
	require.NoError(t, err)
	require.False(t, got.SMSOptIn, "not opted in")
	_, err = f.customers.ByPhone(ctx, f.shop.ID, "+15555550313")
	require.Error(t, err, "not imported")
	require.Zero(t, f.count(t, `SELECT count(*) FROM consent_events`))
}
