package inbound

import (
	"github.com/slotrecovery/slotrecovery/internal/language"
	"github.com/slotrecovery/slotrecovery/internal/replies"
)

// Keyword is what a reply asks for.
type Keyword int

// Keywords a reply can carry.
const (
	KeywordUnknown Keyword = iota
	KeywordYes
	KeywordNo
	KeywordStop
	KeywordStart
	KeywordHelp
	// KeywordClarify: the reply leans towards the offer but does not plainly take it (a
	// reaction to the offer, "yes but can it be 4pm?", "maybe"): it is asked again.
	KeywordClarify
	// KeywordCancel: the customer asks to cancel their appointment ("cancel my booking",
	// "tengo que cancelar mi cita"): a booked customer's booking is cancelled, or the
	// request goes to the owner (cancelRequest); from anyone else it is for a person.
	KeywordCancel
	// KeywordPause: PAUSE (PAUSA, and French PAUSE): no offers for 14 days
	// (customers.PauseFor); KeywordResume: RESUME (REANUDAR, REPRENDRE) ends it.
	KeywordPause
	KeywordResume
)

// reading is what a reply says: what it asks for, and the one supported language its
// words belong to ("" when they fit none or several: "ok", "no").
type reading struct {
	kw   Keyword
	lang language.Code
	// loose is a yes made only of loose affirmatives ("ok", 👍, "sure", "va"): it books
	// only as the answer to an offer (answersOffer).
	loose bool
	// weak is a language that rests on one word several languages write ("si", "va"):
	// no evidence to learn the customer's language from (learn).
	weak bool
	// wrongNumber is an opt-out saying the number is not the customer's: it may have
	// been reassigned, and the owner should know (keep).
	wrongNumber bool
	// cannotCome is a reply that says the customer cannot come ("can't make it", "no
	// puedo ir"): a no to a live offer, and from a booked customer without one, a request
	// to cancel the booking (cancelRequest).
	cannotCome bool
}

// keywords maps internal/replies' intents to what inbound does with them.
var keywords = map[replies.Intent]Keyword{
	replies.Yes: KeywordYes, replies.No: KeywordNo, replies.OptOut: KeywordStop, replies.OptIn: KeywordStart,
	replies.Help: KeywordHelp, replies.Clarify: KeywordClarify, replies.Unknown: KeywordUnknown,
	replies.CancelRequest: KeywordCancel, replies.Pause: KeywordPause, replies.Resume: KeywordResume,
}

// readReply reads a reply through internal/replies, whose rules are data, one file per
// language (see its package comment): affirmatives, refusals and opt-outs in English,
// Spanish and French, reactions to the offer, a yes with a question. optOutType is
// Twilio's OptOutType field (STOP, START, HELP), sent by Messaging Services with
// Advanced Opt-Out; a YES that Twilio counted as an opt-in (START) is still a claim.
func readReply(body, optOutType string) reading {
	r := replies.Read(body, optOutType)
	rd := reading{kw: keywords[r.Intent], loose: r.Loose, weak: r.Weak, wrongNumber: r.WrongNumber, cannotCome: r.CannotCome}
	if tag, ok := r.Languages.Only(); ok {
		rd.lang, _ = language.Parse(tag)
	}
	return rd
}

// Parse reads what a reply asks for (see readReply).
func Parse(body, optOutType string) Keyword { return readReply(body, optOutType).kw }
