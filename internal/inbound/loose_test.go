package inbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/slots"
)

// say sends body from phone and returns the answer.
func (w *world) say(t *testing.T, sid, from, body string) inbound.Answer {
	t.Helper()
	ans, err := w.inbound.Reply(context.Background(), inbound.Message{MessageSID: sid, From: from, To: w.shop.SMSNumber, Body: body})
	require.NoError(t, err)
	return ans
}

// newerOffer declares another opening and texts the customer at phone an offer of it,
// newer than every offer they hold; it returns the opening.
func (w *world) newerOffer(t *testing.T, phone string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	op, err := w.slots.Declare(ctx, w.shop, slots.NewOpening{StartsAt: time.Now().Add(7 * time.Hour), DurationMinutes: 30, Service: "Colour", PriceCents: 4500})
	require.NoError(t, err)
	w.offer(t, op.ID, phone)
	return op.ID
}

// offer texts the customer at phone an offer of opening, now; their earlier offers are
// moved a minute back.
func (w *world) offer(t *testing.T, opening uuid.UUID, phone string) {
	t.Helper()
	ctx := context.Background()
	_, err := w.pool.Exec(ctx, `UPDATE slot_offers o SET created_at = o.created_at - interval '1 minute', sent_at = o.sent_at - interval '1 minute'
		FROM customers c WHERE c.id = o.customer_id AND c.shop_id = $1 AND c.phone = $2`, w.shop.ID, phone)
	require.NoError(t, err)
	_, err = w.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at, sent_at)
		SELECT $1, c.id, $2, 1, 1, 'sent', now(), now()
		FROM customers c WHERE c.shop_id = $2 AND c.phone = $3`, opening, w.shop.ID, phone)
	require.NoError(t, err)
}

// filledBy reports who holds the opening, "" for nobody.
func (w *world) filledBy(t *testing.T, opening uuid.UUID) string {
	t.Helper()
	var phone *string
	require.NoError(t, w.pool.QueryRow(context.Background(), `SELECT c.phone FROM slot_openings o LEFT JOIN customers c ON c.id = o.filled_by
		WHERE o.id = $1`, opening).Scan(&phone))
	if phone == nil {
		return ""
	}
	return *phone
}

// TestALooseYesBooksTheOfferItAnswers: "ok" and 👍 answering the offer they were sent
// book it, with no more than the YES path reads.
func TestALooseYesBooksTheOfferItAnswers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	require.Equal(t, inbound.OutcomeBooked, w.say(t, "SMok", w.phones[0], "ok").Outcome)
	require.Equal(t, w.phones[0], w.filledBy(t, w.opening))
	require.Equal(t, inbound.OutcomeTaken, w.say(t, "SMthumb", w.phones[1], "👍").Outcome)
}

// TestAnOkAfterADeclineBooksNothing: a reply answers the last text the customer was
// sent. After "declined" an "ok" acknowledges it and books nothing, even with an older
// offer live (it is asked about); an "ok" to that question books it, and so does an
// explicit YES whatever came last.
func TestAnOkAfterADeclineBooksNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	for _, p := range w.phones {
		w.newerOffer(t, p)
	}
	require.Equal(t, inbound.OutcomeDeclined, w.say(t, "SMno0", w.phones[0], "no thanks").Outcome)
	ack := w.say(t, "SMok0", w.phones[0], "ok")
	require.Equal(t, inbound.OutcomeClarify, ack.Outcome, ack.Message)
	require.Equal(t, "", w.filledBy(t, w.opening), "an ok after declined booked the older offer")
	require.Equal(t, inbound.OutcomeBooked, w.say(t, "SMok0b", w.phones[0], "ok").Outcome, "an ok to the question about the offer books it")
	require.Equal(t, w.phones[0], w.filledBy(t, w.opening))

	// An explicit YES claims the newest live offer whatever the last text was.
	w2 := newWorld(t, 1)
	w2.newerOffer(t, w2.phones[0])
	require.Equal(t, inbound.OutcomeDeclined, w2.say(t, "SMno", w2.phones[0], "no").Outcome)
	require.Equal(t, inbound.OutcomeBooked, w2.say(t, "SMyes", w2.phones[0], "YES").Outcome)
	require.Equal(t, w2.phones[0], w2.filledBy(t, w2.opening))
}

// TestABookedCustomersOkIsNoBooking: the customer who booked says "ok" to the booked
// answer: it is not answered as a booking again (an explicit YES is: their first answer
// may have been lost).
func TestABookedCustomersOkIsNoBooking(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	require.Equal(t, inbound.OutcomeBooked, w.say(t, "SMyes", w.phones[0], "YES").Outcome)
	require.Equal(t, inbound.OutcomeUnrecognized, w.say(t, "SMok", w.phones[0], "ok thanks").Outcome)
	require.Equal(t, inbound.OutcomeBooked, w.say(t, "SMyes2", w.phones[0], "yes").Outcome)
}

// TestAnOkToAFilledOfferBooksNoOlderOne: the customer's last text was an offer someone
// else took; their "ok" answers that one, not an older offer still live.
func TestAnOkToAFilledOfferBooksNoOlderOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	newest := w.newerOffer(t, w.phones[0])
	w.offer(t, newest, w.phones[1])
	// The other customer takes the newest opening: it is filled, the first's offer of it lost.
	require.Equal(t, inbound.OutcomeBooked, w.say(t, "SMwin", w.phones[1], "YES").Outcome)
	require.Equal(t, w.phones[1], w.filledBy(t, newest))

	ans := w.say(t, "SMlate", w.phones[0], "ok")
	require.Equal(t, inbound.OutcomeClarify, ans.Outcome, ans.Message)
	require.Equal(t, "", w.filledBy(t, w.opening), "an ok to a filled offer booked an older one")
}

// TestAnAcknowledgementIsAskedAgain: "ok thank you for the reminder" and "Merci 👍"
// are acknowledgements: the live offer is asked about, nothing is booked.
func TestAnAcknowledgementIsAskedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 2)
	for i, body := range []string{"Ok thank you for the reminder", "Merci 👍"} {
		ans := w.say(t, "SMack"+string(rune('a'+i)), w.phones[i], body)
		require.Equal(t, inbound.OutcomeClarify, ans.Outcome, body)
	}
	require.Equal(t, "", w.filledBy(t, w.opening))
}

// TestOneAmbiguousWordTeachesNoLanguage: "si" (Spanish, and French too) does not make an
// English shop's customer who wrote before Spanish; "no, gracias" does. A language once
// recorded is not changed by a reply in another. (A first text "Sí" teaches Spanish:
// TestACustomerIsAnsweredInTheLanguageTheyWrite.)
func TestOneAmbiguousWordTeachesNoLanguage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 2)
	lang := func(phone string) language.Code {
		c, err := w.customers.ByPhone(ctx, w.shop.ID, phone)
		require.NoError(t, err)
		return c.Language
	}
	w.say(t, "SMfirst", w.phones[0], "what time is it")
	w.say(t, "SMsi", w.phones[0], "si")
	require.Equal(t, language.Code(""), lang(w.phones[0]), "one ambiguous word switched the customer's language")
	w.say(t, "SMsigracias", w.phones[1], "no, gracias")
	require.Equal(t, language.Spanish, lang(w.phones[1]))
	w.say(t, "SMoui", w.phones[1], "non merci")
	require.Equal(t, language.Spanish, lang(w.phones[1]), "a recorded language changed")
}

// TestOptOutsInOtherWordsStop: the opt-outs the reader missed before issue 45 opt the
// number out, and a wrong number is left for the owner to see, its customer marked
// possibly reassigned.
func TestOptOutsInOtherWordsStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bodies := []string{"Stop I'm not interested", "wrong number", "bórrenme", "merci de me retirer de votre liste"}
	w := newWorld(t, len(bodies))
	for i, body := range bodies {
		require.Equal(t, inbound.OutcomeOptedOut, w.say(t, "SMout"+string(rune('a'+i)), w.phones[i], body).Outcome, body)
		c, err := w.customers.ByPhone(ctx, w.shop.ID, w.phones[i])
		require.NoError(t, err)
		require.NotNil(t, c.OptedOutAt, body)
		require.Equal(t, body == "wrong number", c.PossiblyReassignedAt != nil, "%q marks the customer possibly reassigned: %v", body, c.PossiblyReassignedAt)
	}
	// The wrong number waits for the owner (the number may have been reassigned); the
	// other opt-outs are kept without troubling them.
	unread := func(phone string) (status string, n int) {
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT status, unread FROM conversations WHERE shop_id = $1 AND phone = $2`,
			w.shop.ID, phone).Scan(&status, &n))
		return status, n
	}
	status, n := unread(w.phones[1])
	require.Equal(t, "open", status)
	require.Equal(t, 1, n)
	status, n = unread(w.phones[0])
	require.Equal(t, "closed", status)
	require.Zero(t, n)
}
