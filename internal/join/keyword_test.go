package join_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/customers"
	"github.com/slotrecovery/slotrecovery/internal/join"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
)

// TestKeyword: the default keywords in their languages, whatever the shop; a shop's own
// words in the shop's language, and only that shop's.
func TestKeyword(t *testing.T) {
	t.Parallel()
	plain := shops.Shop{Language: language.English}
	own := shops.Shop{Language: language.Spanish, JoinKeywords: []string{"CORTES", "VIP2"}}
	for body, want := range map[string]language.Code{"JOIN": "en", " join! ": "en", "Unirme": "es", "¡unirme!": "es",
		"inscrire.": "fr", "INSCRIRE": "fr"} {
		for _, shop := range []shops.Shop{plain, own} {
			got, ok := join.Keyword(shop, body)
			require.True(t, ok, body)
			require.Equal(t, want, got, body)
		}
	}
	for body, want := range map[string]language.Code{"cortes": "es", " VIP2! ": "es"} {
		got, ok := join.Keyword(own, body)
		require.True(t, ok, body)
		require.Equal(t, want, got, body)
		_, ok = join.Keyword(plain, body)
		require.False(t, ok, "%s is not the plain shop's", body)
	}
	for _, body := range []string{"", "join me", "YES", "JOINED", "STOP", "joint", "cortes ya", "VIP"} {
		_, ok := join.Keyword(own, body)
		require.False(t, ok, body)
	}
	require.Equal(t, []string{"INSCRIRE", "JOIN", "UNIRME", "CORTES", "VIP2"}, join.ShopKeywords(own))
	require.Equal(t, join.Keywords(), join.ShopKeywords(plain))
}

// TestJoinByText: the join keyword from a number that is no customer gets the
// confirmation in the keyword's language; its YES makes it a customer, recorded as a
// keyword opt-in whose words agreed to are the confirmation, with no address. The same
// number's keyword again the same day sends nothing more; a customer already opted in
// is told so, once per text, and asked nothing.
func TestJoinByText(t *testing.T) {
	t.Parallel()
	f := setup(t, join.Limits{})
	ctx := context.Background()
	const number = "+15555550200"
	out, err := f.join.RequestByText(ctx, f.shop, number, "SMk1", language.French)
	require.NoError(t, err)
	require.True(t, out.Sent)
	require.False(t, out.AlreadyJoined)
	texts := f.texts(t, number)
	require.Len(t, texts, 1)
	require.Contains(t, texts[0], "répondez OUI")
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM customers`))

	again, err := f.join.RequestByText(ctx, f.shop, number, "SMk2", language.French)
	require.NoError(t, err)
	require.Equal(t, "number", again.Refused)

	handled, err := f.join.Confirm(ctx, f.shop, join.Reply{From: number, Body: "Oui", MessageSID: "SMy"})
	require.NoError(t, err)
	require.True(t, handled)
	c, err := f.customers.ByPhone(ctx, f.shop.ID, number)
	require.NoError(t, err)
	require.True(t, c.SMSOptIn)
	require.Equal(t, language.French, c.Language)
	hist, err := f.join.History(ctx, f.shop.ID, c.ID)
	require.NoError(t, err)
	require.Len(t, hist, 1)
	require.Equal(t, join.MethodKeyword, hist[0].Method)
	require.Empty(t, hist[0].IP)
	require.Empty(t, hist[0].UserAgent)
	require.Equal(t, texts[0], hist[0].Disclosure.Text, "the words agreed to are the confirmation's")
	require.Equal(t, "SMy", hist[0].Confirmation.MessageSID)

	bo, err := f.customers.Add(ctx, f.shop.ID, customers.NewCustomer{Phone: "+15555550201", Name: "Bo", SMSOptIn: true})
	require.NoError(t, err)
	for range 2 { // a redelivery of the same text
		out, err = f.join.RequestByText(ctx, f.shop, bo.Phone, "SMk3", language.English)
		require.NoError(t, err)
		require.True(t, out.AlreadyJoined)
	}
	told := f.texts(t, bo.Phone)
	require.Len(t, told, 1)
	require.Contains(t, told[0], "you're already on the list")
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM join_requests`), "none for a customer already in")
}
