// Package inbound answers the texts customers send to a shop's number: it stores each
// message by its MessageSid before acting on it, reads the keyword (YES, NO, STOP,
// START, HELP), does what it asks through the owners of the data (slots books, shops
// opts in and out, offers declines), and stores the answer, so that a redelivery of the
// same MessageSid is answered the same and changes nothing.
// Once the answer has been written back to Twilio it is marked (Delivered).
//
//	text ─▶ store (MessageSid) ─┬─ new ──────▶ parse ─▶ act ─▶ store answer ─▶ TwiML ─▶ mark
//	                            └─ seen before ─▶ the stored answer (waiting briefly
//	                                              for a first delivery still in flight)
//
// Twilio does not retry a webhook, so what a dead handler left is finished by the
// sweeper (Sweep, every minute): a stored text without an answer is handled again, and
// a stored answer never marked is texted; either goes by text, once.
package inbound
