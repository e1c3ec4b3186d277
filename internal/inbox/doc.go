// Package inbox is the owner's inbox: every text a number sends a shop is kept
// in the shop's conversation with that number, beside the texts the shop sent it
// (offers, answers, confirmations, the owner's own replies), so the owner reads a text
// that needs a person in context. It owns the tables conversations and
// conversation_messages.
//
// Who writes what:
//
//	inbound text  ──RecordIn (caller's tx)──▶ message "in"; NeedsOwner: open, unread+1,
//	                                          and the windows: Alert? Ack?
//	shop's texts  ──RecordOut (caller's tx)─▶ message "out" (system), once per key
//	owner         ──Service.Reply──────────▶ message "out" (owner) + jobs.Text, one tx
//	outbox/report ──MarkSent/MarkUnsent/MarkDelivery──▶ the out message's status
//	erasure       ──Forget (caller's tx)────▶ the customer's conversations, messages
//	retention     ──Purge───────────────────▶ texts and idle conversations past the keep
//
// A conversation is open while a text in it waits for a person (the caller says which
// do: an unrecognized reply, a clarify, a text with no live offer that is no keyword)
// and closed otherwise; the owner opens or closes it (SetStatus) and reads it (MarkRead:
// unread 0).
//
// The windows. The owner's alert (a text to the shop's alert number) goes out at most
// once per conversation per AlertEvery, the automatic acknowledgement to the customer at
// most once per AckEvery. RecordIn reports which are due and takes them in the
// caller's transaction: its first statement (ConversationUpsert) locks the
// conversation's row and reads when each was last taken; its second records the text
// and the windows taken. Concurrent texts of one conversation, on any instance, take
// turns on the row lock, and each sees the windows the previous one committed: a window
// is taken once, by the transaction that commits with it. The caller texts only when its
// transaction commits (as a River job in it), so a rolled-back text leaves the window
// free. A transaction that records several texts takes the conversations' rows in one
// order (RecordInMany, RecordOutMany: by shop, then phone), so two never deadlock.
//
// The package sends nothing itself but the owner's replies, which go out as jobs.Text
// through the outbox like every transactional text (same sender, same pacing, never to
// a number that opted out or was erased since). The wording of alerts and
// acknowledgements belongs to the callers (internal/texts); this package only says
// when.
package inbox
