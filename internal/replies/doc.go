// Package replies reads a customer's SMS reply to a live offer of a slot: yes (book it),
// no, opt-out (no more texts), opt-in, help, pause (no offers for a while), resume,
// clarify (leaning yes, ask again), a request to cancel the customer's appointment
// (cancel_request) or unknown (a person should read it), and which of the supported
// languages (English, Spanish, French) its words belong to. It imports nothing of ours.
//
// Two mistakes cost more than any other, and the reading is built around them:
//
//   - A false yes books a slot and charges someone. Only a reply made of nothing but yes
//     phrases, fillers ("please", "gracias", "merci", an emoji) and [with] words
//     ("perfect", "see you then") reads as yes, and only without a question mark and
//     without a no or an unsure phrase. "Yes but at 5?", "yes at 4:30", "yes?" and a
//     reaction to the offer read as clarify. When in doubt the answer is clarify or
//     unknown, never yes.
//   - A missed opt-out breaks the law (the FCC counts any reasonable way of saying stop,
//     in the language the text was sent in): when in doubt, stop. Opt-out phrases win
//     over everything but a reaction's quoted text: "stop texting me, yes", "no more
//     texts", "Stop I'm not interested", "wrong number", "this is spam" and abuse aimed
//     at the sender are opt-outs. Only a short list keeps the verb stop in another sense
//     ("I can't stop by today", "stop by at 4?", "non-stop"), and Twilio's single-word
//     keywords (CANCEL, END, QUIT...) count only as the whole reply, so "cancel my 3pm
//     appointment" is not one: it is a cancellation request.
//   - An acknowledgement is no yes: "ok thank you for the reminder", "ok no worries",
//     "Merci 👍", "Entendu" read as clarify. A yes made only of loose affirmatives ("ok",
//     👍, "sure", "va": [yes loose]) is marked Reading.Loose: it takes an offer only as
//     the answer to it, which the caller knows (the last text it sent) and this package
//     does not.
//
// # How a reply is read
//
// The reply is split into words and emoji. Words are folded: compatibility-decomposed,
// accents dropped, lower-cased, apostrophes removed inside them ("Can’t" is "cant",
// "Sí" is "si", "ＹＥＳ" is "yes"); a word also matches a rule word spelled with some
// letters repeated ("yesss", "nooo", "siii"). Skin tones and variation selectors are
// dropped from emoji (👍🏽 is 👍). A word spelled out letter by letter is joined first
// ("S T O P", "s.t.o.p", "S T O P!": three letters or more, or a whole reply of two, spaces
// and ! ? ¡ ¿ around it allowed). The marks . , ! ? ; : ¡ ¿ and line breaks split the
// reply into clauses. Then, in this order:
//
//  1. Twilio's OptOutType, when given, wins: STOP is an opt-out, HELP is help, and START
//     is an opt-in unless the words read as yes (Twilio counts YES as an opt-in keyword).
//  2. A reaction: at most six words, then a quotation mark (“ " « „), where the words are
//     a whole [... react] phrase: `Liked “…”` and `👍 to “…”` read as clarify, `Disliked
//     “…”` as no, `Removed a like from “…”` as unknown. The quoted text is the offer,
//     not the customer's words, and is not read (its "Reply STOP to opt out" is no
//     opt-out); words after it are the customer's again, and an opt-out there is one
//     (`Liked “…” STOP`). Quotation without a known reaction verb is read like any
//     other reply, unless a quotation of five words or more follows at most six words:
//     then it is a reaction whose wording no rule knows, its quoted text is not read,
//     and the reply is an opt-out if the words around the quotation are one, else
//     unknown (an unknown reaction quoting "STOP to opt out" is no opt-out, one quoting
//     "Reply YES" no yes).
//  3. Opt-out: an [optout any] phrase anywhere, an [optout lead] phrase starting a
//     clause ("STOP PUB", "baja ya no me interesa") unless a longer phrase of another
//     kind starts there ("stop by"), a clause that is only [optout clause] phrases and
//     fillers ("Stop. Who is this?"), or a reply that is only [optout whole] and
//     [optout clause] phrases and fillers ("cancel", "please stop").
//  4. Help, then opt-in, then pause (PAUSE, PAUSA), then resume (RESUME, REANUDAR,
//     REPRENDRE): the reply is only such phrases and fillers.
//  5. Unknown on purpose: an [unknown any] phrase anywhere (a late-running note, a
//     reschedule request, a price question) goes to a person whatever else it says.
//     Then a [cancel any] phrase anywhere ("cancel my booking", "I need to cancel",
//     "tengo que cancelar mi cita", "je dois annuler") is a cancellation request
//     (CancelRequest). A [cannot any] phrase ("can't make it", "no puedo ir", "je ne
//     pourrai pas venir") is a no that also sets Reading.CannotCome: from a customer who
//     holds a booking it asks to cancel it, which the caller knows and this package
//     does not.
//  6. Yes, no and clarify. A no speaks when a clause starts with a [no lead] phrase, a
//     clause is only no phrases, or a [no any] phrase is anywhere; clarify likewise. A
//     yes phrase starting a clause ("yes but can it be 4pm?") is an affirmative. Then:
//     only yes phrases (with fillers and [with] words) and no question mark, no no, no
//     unsure and no word of another language's meaning beside words of no one language
//     (English "ya" beside Spanish: "ya gracias") → yes; a no with a firm affirmative →
//     clarify ("no wait, yes"); a no → no, also beside a loose "ok" ("ok, not today");
//     an affirmative, an unsure phrase, or only [with] words ("perfect") → clarify;
//     else unknown.
//
// At the start of a clause, a longer phrase of another kind wins over a shorter one:
// "no problem" is a [with] phrase, not a "no"; "not sure" is unsure, not a no.
//
// # Rules
//
// The phrases are data: rules/en.txt, rules/es.txt and rules/fr.txt, embedded and
// compiled on first use. Each file is lines of patterns under section headers; # starts
// a comment. A header is [intent kind], [with] or [filler]:
//
//	intent: yes, no, clarify, optout, optin, help, pause, resume, unknown
//	kind:   whole   the whole reply is such phrases (fillers aside)
//	        clause  a whole clause is such phrases (fillers aside); whole counts too
//	        lead    a clause starts with the phrase, whatever follows; whole counts too
//	        any     the phrase anywhere in the reply
//	        react   the words of a reaction before its quoted text
//	        loose   (yes only) whole, but an affirmative that takes an offer only as
//	                the answer to it ("ok", 👍)
//	[with]   words that may go with a yes but alone are only clarify ("perfect")
//	[filler] words that change nothing ("please", "thanks", "hola", "merci")
//	[reassigned any]  a wrong number: an [optout any] phrase that also sets
//	                  Reading.WrongNumber (the number may have been reassigned)
//	[cancel any]      a request to cancel the customer's appointment (CancelRequest)
//	[cannot any]      the customer cannot come: a [no any] phrase that also sets
//	                  Reading.CannotCome
//
// Yes may only be whole or loose (whole, but Reading.Loose); optout may be whole,
// clause, lead or any; optin, help, pause and resume only whole; unknown only any or react. A
// pattern is words separated by spaces, folded as a reply's words are (so "d'accord", "arrêt" and "Sí" may be written as they are
// spelled), where:
//
//	a|b       either word (each alternative is one word)
//	[a|b]     optional: either word or nothing
//	*         0 to 3 words of any kind (any sections only, not at an end)
//	<emoji>   any emoji (react sections only)
//
// A phrase's languages are the files that list it; a reply's languages are the
// intersection of the languages of the phrases that account for it.
//
// # Tests
//
// testdata/corpus.txt holds labelled replies in the three languages; the corpus test
// prints precision and recall per intent (go test -run Corpus -v) and fails on any reply
// read as yes that is not one and on any opt-out read as something else.
package replies
