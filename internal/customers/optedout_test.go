package customers_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/erasure"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/testkit/customertest"
	"github.com/slotrecovery/slotrecovery/internal/testkit/pgtest"
)

// TestOptedOut: the inbox's question, "may the owner text this number?", answered no for
// a customer who said STOP, a stranger's STOP, and an erased customer's number, under
// every erasure key (a suppression recorded before a rotation still counts); yes for an
// opted-in customer, a number after its own START, and one never heard of. Another
// shop's STOP counts only there.
func TestOptedOut(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.New(t)
	ctx := context.Background()
	oldKey := []byte("an erasure key of at least thirty-two characters, old")
	newKey := []byte("an erasure key of at least thirty-two characters, new")
	before := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{oldKey}})
	svc := shops.New(pool, shops.Config{})
	cs := customertest.NewWith(t, pool, customers.Config{PhoneKeys: [][]byte{newKey, oldKey}})
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	shop, _, err := svc.Create(ctx, shops.NewShop{Name: "A", Timezone: "UTC", SMSNumber: "+15555550100", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)
	other, _, err := svc.Create(ctx, shops.NewShop{Name: "B", Timezone: "UTC", SMSNumber: "+15555550101", Currency: "usd", PaymentMode: shops.PaymentNone})
	require.NoError(t, err)

	stopped, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15557310001", Name: "Stop", SMSOptIn: true})
	require.NoError(t, err)
	require.NoError(t, cs.OptOut(ctx, stopped.ID))
	_, err = cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15557310002", Name: "Fine", SMSOptIn: true})
	require.NoError(t, err)
	require.NoError(t, before.OptOutNumber(ctx, shop.ID, "+15557310003")) // a stranger, under the old key
	erased, err := cs.Add(ctx, shop.ID, customers.NewCustomer{Phone: "+15557310004", Name: "Gone", SMSOptIn: true})
	require.NoError(t, err)
	require.NoError(t, erasure.New(pool, cs, rc, erasure.Config{}).Erase(ctx, shop.ID, erased.ID))
	require.NoError(t, cs.OptOutNumber(ctx, shop.ID, "+15557310005"))
	require.NoError(t, cs.OptInNumber(ctx, shop.ID, "+15557310005"))
	require.NoError(t, cs.OptOutNumber(ctx, other.ID, "+15557310006"))

	for _, tc := range []struct {
		name, number string
		want         bool
	}{
		{"a customer who said STOP", "+15557310001", true},
		{"an opted-in customer", "+15557310002", false},
		{"a stranger's STOP, kept under the old key", "+15557310003", true},
		{"an erased customer's number", "+15557310004", true},
		{"STOP, then START", "+15557310005", false},
		{"another shop's STOP", "+15557310006", false},
		{"never heard of", "+15557310007", false},
	} {
		got, err := cs.OptedOut(ctx, shop.ID, tc.number)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	got, err := cs.OptedOut(ctx, other.ID, "+15557310006")
	require.NoError(t, err)
	require.True(t, got, "at the shop it said STOP to")
}
