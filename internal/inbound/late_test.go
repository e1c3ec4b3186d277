package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/slots"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// countOutcomeWrites makes the world's database note every later write of a stored
// text's outcome (its answer stored apart from the text), and returns a reader of those
// notes by MessageSid.
func (w *world) countOutcomeWrites(t *testing.T) func(sid string) int {
	t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE outcome_writes (message_sid text NOT NULL)`,
		`CREATE FUNCTION note_outcome_write() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN INSERT INTO outcome_writes VALUES (NEW.message_sid); RETURN NULL; END $$`,
		`CREATE TRIGGER outcome_written AFTER UPDATE OF outcome ON inbound_messages
		 FOR EACH ROW WHEN (OLD.outcome IS DISTINCT FROM NEW.outcome) EXECUTE FUNCTION note_outcome_write()`,
	} {
		_, err := w.pool.Exec(ctx, sql)
		require.NoError(t, err)
	}
	return func(sid string) int {
		var n int
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM outcome_writes WHERE message_sid = $1`, sid).Scan(&n))
		return n
	}
}

// TestLateYesIsAnsweredAsItIsStored: once the slot is filled, the YES of the others who
// were offered it can only be "taken", and that outcome is written with the text, in the
// statement that stores it (no write of its own). Its words follow from the outcome: the
// customer is told them, and so is a redelivery (the sweeper's retelling:
// TestUnheardAnswerIsTextedOnce). A YES that may still be something else (a repeat
// from the winner, one from a customer who opted out) and other words are answered as
// before, by a write of their own.
func TestLateYesIsAnsweredAsItIsStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const late = 20
	w := newWorld(t, late+2)
	writes := w.countOutcomeWrites(t)
	won := w.yes(t, "SMfirst", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, won.Outcome)

	answers := make([]inbound.Answer, late)
	errs := make([]error, late)
	var wg sync.WaitGroup
	for i := range late {
		wg.Go(func() {
			answers[i], errs[i] = w.inbound.Reply(ctx, inbound.Message{
				MessageSID: fmt.Sprintf("SMlate%02d", i), From: w.phones[1+i], To: w.shop.SMSNumber, Body: "yes please"})
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	want := texts.English.Taken(&w.shop)
	for i, a := range answers {
		sid := fmt.Sprintf("SMlate%02d", i)
		require.Equal(t, inbound.OutcomeTaken, a.Outcome, sid)
		require.Equal(t, inbound.KeywordYes, a.Keyword, sid)
		require.Equal(t, want, a.Message, sid)
		var outcome string
		var reply *string
		var handled *time.Time
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT outcome, reply, handled_at FROM inbound_messages WHERE message_sid = $1`, sid).
			Scan(&outcome, &reply, &handled))
		require.Equal(t, "taken", outcome, sid)
		require.Nil(t, reply, "%s: the words are composed where they are told, not stored", sid)
		require.NotNil(t, handled, sid)
		require.Zero(t, writes(sid), "%s: answered in the statement that stored it", sid)
	}

	again, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMlate03", From: w.phones[4], To: w.shop.SMSNumber, Body: "yes please"})
	require.NoError(t, err)
	require.True(t, again.Replayed, "a redelivery")
	require.Equal(t, inbound.OutcomeTaken, again.Outcome)
	require.Equal(t, want, again.Message)

	// The winner's YES again: the same booking, not "taken".
	repeat := w.yes(t, "SMagain", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, repeat.Outcome)
	require.Equal(t, won.BookingID, repeat.BookingID)
	require.Equal(t, 1, writes("SMagain"))

	// A customer who said STOP is told so, whatever became of the slot.
	stopped := w.phones[late+1]
	stop, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMstop", From: stopped, To: w.shop.SMSNumber, Body: "STOP"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeOptedOut, stop.Outcome)
	optedOut := w.yes(t, "SMstopped", stopped)
	require.Equal(t, inbound.OutcomeNoOffer, optedOut.Outcome)
	require.Equal(t, texts.English.OptedOutYes(&w.shop), optedOut.Message)
	require.Equal(t, 1, writes("SMstopped"))

	// Other words are not YES.
	no, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: "SMno", From: w.phones[2], To: w.shop.SMSNumber, Body: "NO"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeDeclined, no.Outcome)
	require.Equal(t, 1, writes("SMno"))
}

// TestAnOpenSlotsYesIsClaimed: a YES stored while the slot is still open is not
// answered by the store: it goes on to the claim, whose answer is written after it.
func TestAnOpenSlotsYesIsClaimed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 1)
	writes := w.countOutcomeWrites(t)
	ans := w.yes(t, "SMonly", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.Equal(t, 1, writes("SMonly"), "the winner's answer is written with the booking's, after the store")
	var outcome string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT outcome FROM inbound_messages WHERE message_sid = 'SMonly'`).Scan(&outcome))
	require.Equal(t, "booked", outcome)
}

// TestALateYesWhileTheNextOfferWaits: a customer whose offer was lost, and whose offer
// of the next opening is recorded but not texted yet (queued, or its text failed), is
// told "taken" for the YES that answered the lost one, not "no offer": the YES cannot
// answer an offer they never read. Both ways a YES is read (the storm's statement, and
// Book's own read) agree.
func TestALateYesWhileTheNextOfferWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 3)
	next, err := w.slots.Declare(ctx, w.shop, slots.NewOpening{StartsAt: time.Now().Add(7 * time.Hour), DurationMinutes: 30, Service: "Cut", PriceCents: 2500})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeBooked, w.yes(t, "SMwin", w.phones[0]).Outcome)
	for i, status := range []string{"queued", "failed"} {
		_, err := w.pool.Exec(ctx, `INSERT INTO slot_offers (opening_id, customer_id, shop_id, generation, wave, status, created_at)
			SELECT $1, c.id, $2, 1, 1, $3, now() + interval '1 second' FROM customers c WHERE c.shop_id = $2 AND c.phone = $4`,
			next.ID, w.shop.ID, status, w.phones[i+1])
		require.NoError(t, err)
		got := w.yes(t, "SMlate"+status, w.phones[i+1])
		require.Equal(t, inbound.OutcomeTaken, got.Outcome, "newest offer %s", status)
		c, err := w.customers.ByPhone(ctx, w.shop.ID, w.phones[i+1])
		require.NoError(t, err)
		claim, err := w.slots.Book(ctx, &w.shop, c.ID)
		require.NoError(t, err)
		require.Equal(t, slots.Taken, claim.Outcome, "Book's own read, newest offer %s", status)
	}
}
