package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/inbound"
	"github.com/slotrecovery/slotrecovery/internal/texts"
)

// sweeperAt returns the world's inbound service as a sweeper running `after` from now
// would see it: the same database, Redis and services, its clock moved on.
func (w *world) sweeperAt(after time.Duration) *inbound.Service {
	return inbound.New(w.pool, w.queue, w.shops, w.customers, w.slots, nil, inbound.Config{Now: func() time.Time { return time.Now().Add(after) }})
}

// sweep runs svc's sweep, fails the test on an error and returns how many texts it
// finished or retold. (Counts, not only the jobs: River would drop a second job with the
// same arguments, hiding a second retelling.)
func sweep(t *testing.T, svc *inbound.Service) int {
	t.Helper()
	n, err := svc.Sweep(context.Background())
	require.NoError(t, err)
	return n
}

// TestUnheardAnswerIsTextedOnce: a YES is answered (taken) and its answer stored, but the
// instance dies before the answer is written back to Twilio, so Twilio never reports it
// taken: the sweeper texts the stored answer, once, and only once it cannot still be on
// its way.
func TestUnheardAnswerIsTextedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 2)
	won := w.yes(t, "SMwon", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, won.Outcome)
	require.NoError(t, w.taken(ctx, "SMwon", won))
	lost := w.yes(t, "SMlost", w.phones[1])
	require.Equal(t, inbound.OutcomeTaken, lost.Outcome)
	// No report for SMlost: its answer never reached Twilio.

	require.Zero(t, sweep(t, w.inbound))
	require.Empty(t, w.texts(t, "reply:SMlost"), "an answer stored a moment ago may still be on its way")

	later := w.sweeperAt(time.Minute)
	require.Equal(t, 1, sweep(t, later))
	require.Equal(t, []string{lost.Message}, w.texts(t, "reply:SMlost"), "the stored answer, by text")
	require.Zero(t, sweep(t, later))
	require.Zero(t, sweep(t, w.sweeperAt(2*time.Minute)))
	require.Len(t, w.texts(t, "reply:SMlost"), 1, "texted once")
	require.Empty(t, w.texts(t, "reply:SMwon"), "the winner heard their answer")
}

// TestConcurrentDeliveredAnswersAreAllMarked: Twilio reports the answers of a storm at
// once and their marks go together (one batch for the answers and the bookings they
// told of): every answer is marked as heard, the winner's booking as told, and nothing
// is texted again.
func TestConcurrentDeliveredAnswersAreAllMarked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 30
	w := newWorld(t, n)
	answers := make([]inbound.Answer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			answers[i], errs[i] = w.inbound.Reply(ctx, inbound.Message{
				MessageSID: fmt.Sprintf("SMstorm%02d", i), From: w.phones[i], To: w.shop.SMSNumber, Body: "YES"})
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	booked := uuid.Nil
	for _, a := range answers {
		if a.Outcome == inbound.OutcomeBooked {
			require.Equal(t, uuid.Nil, booked, "two bookings: %+v", answers)
			booked = a.BookingID
		}
	}
	require.NotEqual(t, uuid.Nil, booked, "nobody booked: %+v", answers)

	for i := range n {
		wg.Go(func() {
			errs[i] = w.taken(ctx, fmt.Sprintf("SMstorm%02d", i), answers[i])
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))

	var marked int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE answered_at IS NOT NULL`).Scan(&marked))
	require.Equal(t, n, marked, "answers marked as written back")
	var told *time.Time
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT customer_told_at FROM bookings WHERE id = $1`, booked).Scan(&told))
	require.NotNil(t, told, "the winner heard of the booking: no notice is owed")
	require.Zero(t, sweep(t, w.sweeperAt(time.Minute)), "nothing to text again")
}

// TestOldUnheardAnswerIsLeft: an answer lost longer ago than the sweeper's window is of
// no use any more and is not texted.
func TestOldUnheardAnswerIsLeft(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	ans, err := w.inbound.Reply(context.Background(), inbound.Message{MessageSID: "SMold", From: w.phones[0], To: w.shop.SMSNumber, Body: "HELP"})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeHelp, ans.Outcome)
	require.Zero(t, sweep(t, w.sweeperAt(31*time.Minute)))
	require.Empty(t, w.texts(t, "reply:SMold"))
}

// TestAnsweredMessageIsNotTexted: an answer Twilio took (AnswerTaken), first or replayed
// to a redelivery, is never texted; one whose answer taken was not the stored one (a
// redelivery told "try again" while the first delivery was still deciding) is.
func TestAnsweredMessageIsNotTexted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 3)
	first := w.yes(t, "SMheard", w.phones[0])
	require.NoError(t, w.taken(ctx, "SMheard", first))

	// The first delivery's answer was lost; Twilio redelivered and the replay got through.
	w.yes(t, "SMreplayed", w.phones[1])
	replay := w.yes(t, "SMreplayed", w.phones[1])
	require.True(t, replay.Replayed)
	require.NoError(t, w.taken(ctx, "SMreplayed", replay))

	// What Twilio took was not the stored answer.
	other := w.yes(t, "SMother", w.phones[2])
	require.Equal(t, inbound.OutcomeTaken, other.Outcome)
	require.NoError(t, w.taken(ctx, "SMother", inbound.Answer{Outcome: inbound.OutcomeRetryLater, Message: texts.English.RetryLater(), Replayed: true}))

	require.Equal(t, 1, sweep(t, w.sweeperAt(time.Minute)), "SMother only")
	require.Zero(t, sweep(t, w.sweeperAt(5*time.Minute)))
	require.Empty(t, w.texts(t, "reply:SMheard"))
	require.Empty(t, w.texts(t, "reply:SMreplayed"))
	require.Equal(t, []string{other.Message}, w.texts(t, "reply:SMother"))
	var marked int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE answered_at IS NOT NULL`).Scan(&marked))
	require.Equal(t, 2, marked)
}

// TestUnheardBookedAnswerIsTextedOnceIfUntold: a booked answer that never reached Twilio
// is texted by the sweeper, once, and the booking is then told (its notice texts
// nothing); when the customer was told of the booking already (the notice or the link
// came first), the sweeper texts nothing.
func TestUnheardBookedAnswerIsTextedOnceIfUntold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	w := newWorld(t, 1)
	ans := w.yes(t, "SMbooked", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	later := w.sweeperAt(time.Minute)
	require.Equal(t, 1, sweep(t, later))
	require.Zero(t, sweep(t, later))
	require.Equal(t, []string{ans.Message}, w.texts(t, "reply:SMbooked"), "texted once")
	require.NoError(t, w.ledger.Notify(ctx, ans.BookingID))
	require.Empty(t, w.texts(t, "booking_notice:"+ans.BookingID.String()), "the sweeper's text told them: no notice")

	w = newWorld(t, 1)
	ans = w.yes(t, "SMtold", w.phones[0])
	require.Equal(t, inbound.OutcomeBooked, ans.Outcome)
	require.NoError(t, w.ledger.Notify(ctx, ans.BookingID)) // the notice ran first
	require.Len(t, w.texts(t, "booking_notice:"+ans.BookingID.String()), 1)
	require.Equal(t, 1, sweep(t, w.sweeperAt(time.Minute)), "settled, without a text")
	require.Zero(t, sweep(t, w.sweeperAt(2*time.Minute)))
	require.Empty(t, w.texts(t, "reply:SMtold"), "the customer was told of the booking already")
	var retold *time.Time
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT retold_at FROM inbound_messages WHERE message_sid = 'SMtold'`).Scan(&retold))
	require.NotNil(t, retold, "settled: later sweeps do not look at it again")
}

// TestTakenOverTextIsNotRetold: a text the sweeper took over and answered by text is not
// texted a second time as an unheard answer.
func TestTakenOverTextIsNotRetold(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1)
	w.storeUnanswered(t, "SMorphanNo", w.phones[0], "NO", time.Now().Add(-2*time.Minute))
	require.Equal(t, 1, sweep(t, w.inbound))
	require.Len(t, w.texts(t, "reply:SMorphanNo"), 1)
	require.Zero(t, sweep(t, w.sweeperAt(time.Minute)))
	require.Zero(t, sweep(t, w.sweeperAt(10*time.Minute)))
	require.Len(t, w.texts(t, "reply:SMorphanNo"), 1)
}

// TestAnswerTakenUnlessFailed: Twilio reports on the answer's action URL what became of
// the answer's message. Any status but failed or undelivered marks the answer heard,
// and the sweeper leaves it; a failed or undelivered one, or no report at all, leaves it
// for the sweeper, which texts it once it cannot still be on its way. Reports repeat
// (Twilio retries a report, and reports each status): nothing changes.
func TestAnswerTakenUnlessFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		sid, status string // "" status: no report
		heard       bool
	}{
		{"SMsent", "sent", true},
		{"SMqueued", "queued", true},
		{"SMdelivered", "delivered", true},
		{"SMfailed", "failed", false},
		{"SMundelivered", "undelivered", false},
		{"SMsilent", "", false},
	}
	w := newWorld(t, len(cases))
	answers := map[string]inbound.Answer{}
	for i, c := range cases {
		ans, err := w.inbound.Reply(ctx, inbound.Message{MessageSID: c.sid, From: w.phones[i], To: w.shop.SMSNumber, Body: "HELP"})
		require.NoError(t, err)
		require.Equal(t, inbound.OutcomeHelp, ans.Outcome)
		answers[c.sid] = ans
		if c.status != "" {
			for range 2 {
				require.NoError(t, w.inbound.MarkAnswerSent(ctx, inbound.AnswerReport{For: c.sid, Outcome: ans.Outcome, Status: c.status}))
			}
		}
	}
	require.Zero(t, sweep(t, w.inbound), "nothing is texted while an answer may still be on its way")
	require.Equal(t, 3, sweep(t, w.sweeperAt(time.Minute)))
	for _, c := range cases {
		var marked bool
		require.NoError(t, w.pool.QueryRow(ctx, `SELECT answered_at IS NOT NULL FROM inbound_messages WHERE message_sid = $1`, c.sid).Scan(&marked))
		require.Equal(t, c.heard, marked, "%s (%q) marked as heard", c.sid, c.status)
		if c.heard {
			require.Empty(t, w.texts(t, "reply:"+c.sid), "%s: Twilio took it", c.sid)
		} else {
			require.Equal(t, []string{answers[c.sid].Message}, w.texts(t, "reply:"+c.sid), "%s (%q): texted", c.sid, c.status)
		}
	}
}

// taken reports ans, the answer to the text sid, as taken (MessageStatus "sent"), as
// Twilio does on the action URL of the answer's <Message>.
func (w *world) taken(ctx context.Context, sid string, ans inbound.Answer) error {
	t := inbound.AnswerReport{For: sid, Outcome: ans.Outcome, BookingID: ans.BookingID, Status: "sent"}
	if ans.WordsLeft {
		t.Words = ans.Message
	}
	return w.inbound.MarkAnswerSent(ctx, t)
}

// TestLateYesWordsComeWithTheReport: a late YES is answered as it is stored, without its
// words (they follow from the outcome); the report that Twilio took the answer carries
// them, and the mark stores them, so the owner's inbox shows what the customer was told.
func TestLateYesWordsComeWithTheReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, 2)
	require.Equal(t, inbound.OutcomeBooked, w.yes(t, "SMwinner", w.phones[0]).Outcome)
	late := w.yes(t, "SMlate", w.phones[1])
	require.Equal(t, inbound.OutcomeTaken, late.Outcome)
	require.True(t, late.WordsLeft, "a late YES is stored without its words")
	var reply *string
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT reply FROM inbound_messages WHERE message_sid = 'SMlate'`).Scan(&reply))
	require.Nil(t, reply)
	require.NoError(t, w.taken(ctx, "SMlate", late))
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT reply FROM inbound_messages WHERE message_sid = 'SMlate'`).Scan(&reply))
	require.NotNil(t, reply)
	require.Equal(t, late.Message, *reply)
}
