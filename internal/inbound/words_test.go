package inbound_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/shops"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// reply sends body from the world's customer i and returns the answer.
func (w *world) reply(t *testing.T, sid string, i int, body string) inbound.Answer {
	t.Helper()
	ans, err := w.inbound.Reply(context.Background(), inbound.Message{MessageSID: sid, From: w.phones[i], To: w.shop.SMSNumber, Body: body})
	require.NoError(t, err)
	return ans
}

func (w *world) bookings(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings`).Scan(&n))
	return n
}

func (w *world) language(t *testing.T, i int) *string {
	t.Helper()
	var l *string
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT language FROM customers WHERE shop_id = $1 AND phone = $2`,
		w.shop.ID, w.phones[i]).Scan(&l))
	return l
}

// TestUnsureRepliesAreAskedAgain: a reaction to the offer, a yes with a question or a
// "maybe" books nothing: the answer asks once, naming the slot, and the offer stays
// claimable, so the plain YES that follows books it.
func TestUnsureRepliesAreAskedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	ctx := context.Background()
	op, err := w.slots.Get(ctx, w.shop.ID, w.opening)
	require.NoError(t, err)
	want := texts.English.Clarify(&w.shop, "Cut", op.StartsAt)
	for i, body := range []string{"yes but can it be 4pm?", "Liked “Ana's Salon: Cut opening …”", "maybe", "👍 to “Ana's Salon: Cut…”"} {
		ans := w.reply(t, "SMunsure"+string(rune('a'+i)), 0, body)
		require.Equal(t, inbound.OutcomeClarify, ans.Outcome, body)
		require.Equal(t, want, ans.Message, body)
	}
	require.Zero(t, w.bookings(t), "nothing is booked by an unsure reply")
	require.Equal(t, inbound.OutcomeBooked, w.reply(t, "SMsure", 0, "yes").Outcome)

	// Without a live offer there is nothing to clarify: a person reads it.
	require.Equal(t, inbound.OutcomeUnrecognized, w.reply(t, "SMlater", 0, "maybe").Outcome)
}

// TestRepliesInOtherWords: affirmatives, refusals and opt-outs in the customers' own
// words and languages do what they say; a yes with a question never books, and "I can't
// stop by" is no opt-out.
func TestRepliesInOtherWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		want inbound.Outcome
	}{
		{"Sure!", inbound.OutcomeBooked},
		{"👍🏽", inbound.OutcomeBooked},
		{"ok", inbound.OutcomeBooked},
		{"yesss", inbound.OutcomeBooked},
		{"Sí por favor", inbound.OutcomeBooked},
		{"je le prends", inbound.OutcomeBooked},
		{"Nope, busy", inbound.OutcomeDeclined},
		{"no gracias", inbound.OutcomeDeclined},
		{"please stop texting me", inbound.OutcomeOptedOut},
		{"no más", inbound.OutcomeOptedOut},
		{"arrêtez", inbound.OutcomeOptedOut},
		{"I can't stop by today", inbound.OutcomeDeclined}, // a no, not an opt-out
		{"cancel my 3pm appointment", inbound.OutcomeUnrecognized},
		{"yes but at 5?", inbound.OutcomeClarify},
	} {
		t.Run(c.body, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, 1)
			ans := w.reply(t, "SMwords", 0, c.body)
			require.Equal(t, c.want, ans.Outcome)
			if c.want != inbound.OutcomeBooked {
				require.Zero(t, w.bookings(t))
			}
		})
	}
}

// TestACustomerIsAnsweredInTheLanguageTheyWrite: a customer with no language who
// answers in words only Spanish has ("Sí") is answered in Spanish and texted in it from
// then on; one who writes words of several languages ("ok") or of the shop's own
// language keeps the shop's, and nothing is written for them; an owner's choice is
// never overwritten.
func TestACustomerIsAnsweredInTheLanguageTheyWrite(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 3)
	ctx := context.Background()
	op, err := w.slots.Get(ctx, w.shop.ID, w.opening)
	require.NoError(t, err)

	ans := w.reply(t, "SMsi", 0, "Sí")
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.Equal(t, texts.In(language.Spanish).Confirmed(&w.shop, "Cut", op.StartsAt), ans.Message)
	require.Equal(t, "es", *w.language(t, 0))
	later := w.reply(t, "SMhelp", 0, "HELP")
	require.Equal(t, texts.In(language.Spanish).Help(&w.shop), later.Message, "texted in it from then on")

	taken := w.reply(t, "SMok", 1, "ok")
	require.Equal(t, inbound.OutcomeTaken, taken.Outcome)
	require.Equal(t, texts.English.Taken(&w.shop), taken.Message)
	require.Nil(t, w.language(t, 1), "ok is every language's: nothing learnt")
	require.Equal(t, inbound.OutcomeTaken, w.reply(t, "SMyes", 1, "yes").Outcome)
	require.Nil(t, w.language(t, 1), "the shop's own language is not written")

	// The owner set French for the third: a Spanish reply does not change it.
	_, err = w.pool.Exec(ctx, `UPDATE customers SET language = 'fr' WHERE shop_id = $1 AND phone = $2`, w.shop.ID, w.phones[2])
	require.NoError(t, err)
	fr := w.reply(t, "SMfr", 2, "no gracias")
	require.Equal(t, inbound.OutcomeDeclined, fr.Outcome)
	require.Equal(t, texts.In(language.French).Declined(&w.shop), fr.Message)
	require.Equal(t, "fr", *w.language(t, 2))
}

// TestAShopsLanguageIsItsCustomersDefault: a Spanish shop's customers without a
// language of their own are answered in Spanish, whatever words they use.
func TestAShopsLanguageIsItsCustomersDefault(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	ctx := context.Background()
	_, err := w.pool.Exec(ctx, `UPDATE shops SET language = 'es' WHERE id = $1`, w.shop.ID)
	require.NoError(t, err)
	shop, err := shops.Read(ctx, w.pool, w.shop.ID)
	require.NoError(t, err)
	ans := w.reply(t, "SMes", 0, "HELP")
	require.Equal(t, texts.In(language.Spanish).Help(&shop), ans.Message, "a carrier keyword teaches no language")
	op, err := w.slots.Get(ctx, w.shop.ID, w.opening)
	require.NoError(t, err)
	ans = w.reply(t, "SMok", 0, "ok")
	require.Equal(t, texts.In(language.Spanish).Confirmed(&shop, "Cut", op.StartsAt), ans.Message)
	require.Nil(t, w.language(t, 0))
}
