package inbound

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// AnswerReport is Twilio's report, on the action URL of the <Message> that carried an
// answer, of what it did with the answer the webhook gave to the text For: the answer
// was sent unless Status says it failed.
type AnswerReport struct {
	// For is the MessageSid of the customer's text the answer was given to.
	For string
	// Outcome and BookingID are the answer's, as the action URL named them: only a text
	// whose stored answer is the one Twilio sent is marked.
	Outcome   Outcome
	BookingID uuid.UUID
	// Status is the MessageStatus of the answer's own message ("queued", "sent",
	// "delivered", "failed", "undelivered", …).
	Status string
	// Words are the answer's words when it was stored without them (Answer.WordsLeft);
	// "" otherwise.
	Words string
}

// notSent reports whether a MessageStatus says Twilio did not send the answer: the
// customer is texted it instead.
func notSent(status string) bool { return status == "failed" || status == "undelivered" }

// MarkAnswerSent records that Twilio sent the answer the webhook gave to r.For (Twilio
// requests the action URL of the answer's <Message> once it has made the message, on
// whichever instance the balancer picks): the sweeper does not text it again, and a
// booked customer needs no notice text. A failed or undelivered status records nothing,
// so the sweeper texts the answer once RetellAfter has passed, as it does when Twilio
// never reports. Concurrent reports are written together (one statement, lingering
// markLinger for more), and MarkAnswerSent returns once its own is written. A mark that
// fails (Postgres restarting) is tried again for up to markRetryFor, inside Twilio's
// wait for the report's answer: Twilio's own retries of a report come at once, and a
// report lost costs the customer the same answer once more, by text. An error means the
// mark was not written, and the caller answers so that Twilio may try again (connection
// overrides). Repeated reports change nothing.
func (s *Service) MarkAnswerSent(ctx context.Context, r AnswerReport) error {
	if notSent(r.Status) {
		s.log.InfoContext(ctx, "answer not sent by twilio; it will be texted", "outcome", r.Outcome, "status", r.Status)
		return nil
	}
	a := sentAnswer{sid: cleanText(r.For), outcome: string(r.Outcome), words: cleanText(r.Words)}
	if r.Outcome == OutcomeBooked {
		a.booking = r.BookingID
	}
	if a.sid == "" || a.outcome == "" {
		return nil
	}
	deadline := time.Now().Add(markRetryFor)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		_, err := s.sent.do(ctx, a)
		if err == nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// markRetryFor bounds how long MarkAnswerSent tries a mark again: well inside the read
// timeout of the report's request (TWILIO_CONNECTION_OVERRIDES' rt, 15 s at most).
const markRetryFor = 10 * time.Second
