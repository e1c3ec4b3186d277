// Package inbound answers the texts customers send to a shop's number: it reads the
// keyword (YES, NO, STOP, START, HELP; Parse), stores each message by its MessageSid
// before acting on it, does what it asks through the owners of the data (slots books,
// shops opts in and out, offers declines), and stores the answer, so that a redelivery
// of the same MessageSid is answered the same and changes nothing (Reply). The webhook
// writes the answer back to Twilio in a <Message> whose action URL names the text; Twilio
// requests it once it has made the answer's message, and MarkAnswerSent marks the answer
// sent, on whichever instance gets the report.
//
//	text ─▶ parse ─▶ store (MessageSid) ─┬─ new ──────▶ act ─▶ store answer ─▶ TwiML
//	                                     └─ seen before ─▶ the stored answer (waiting briefly
//	                                                       for a first delivery still in flight)
//	Twilio's report on the action URL ─▶ MarkAnswerSent ─▶ mark (batched)
//
// Storing is batched: the texts of concurrent requests go in one statement, which also
// reads the shop that owns the number, the sender and the offers they can claim (a late
// YES is answered there and then, its outcome stored with the text and its words composed
// here); a booked YES asks the ledger for the payment link (ledger.Service.Checkout) and
// stores link and answer in one round trip. A reply answers the last text its customer
// was sent: a loose yes ("ok", 👍) books only an offer it answers (answersOffer: free
// on the YES path when the newest offer is the live one; else one more statement), and
// an "ok" after "taken", "declined" or a booking is asked about the live offer or left
// to a person. Every answer's words are composed in this
// package: said for the outcomes whose words follow from the outcome, bookedAnswer
// (ledger.BookedText) for a booking's.
//
// What a dead handler left, or an answer Twilio never reported sending, is finished by
// the sweeper (Sweep, every minute): a stored text without an answer is handled again,
// and a stored answer never marked is texted; either goes by text, once.
//
// The files, by concern:
//
//	inbound.go  the entry: Config, Service, Reply (store the text, act, store the answer)
//	parse.go    reading the reply: its keyword (Parse) and language
//	sender.go   who sent it, and the language they are answered in (learn)
//	handle.go   acting on the keyword: YES, NO, STOP and START (opt-outs), HELP
//	cancel.go   a booked customer who cannot come: the booking cancelled through the
//	            ledger (or the request to the owner's inbox), the STOP's booked answer
//	yes.go      acting on a YES: does a loose yes answer an offer, clarify, claim, link
//	owner.go    texts a person must read: the owner's inbox and the conversation
//	answers.go  the answers' words (said, bookedAnswer) and a redelivery's replay
//	store.go    storing texts, answers and marks, batched (group.go runs the batches)
//	sent.go     Twilio's report that it sent an answer, and its mark (MarkAnswerSent)
//	sweep.go    the sweeper: unanswered texts finished, unmarked answers retold
package inbound
