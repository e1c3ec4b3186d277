package replies

import (
	"math/bits"
	"strings"
	"sync"
)

// Intent is what a reply to a live offer asks for.
type Intent string

// The intents a reply can carry. A reply that is none of the others is Unknown: a person
// (the shop's owner) should read it.
const (
	// Unknown is a reply the rules do not recognise, or one they send to a person on
	// purpose ("running 10 min late", "can I move my appointment?").
	Unknown Intent = "unknown"
	// Yes accepts the offer: it books the slot. Only a reply that says nothing but yes
	// reads as Yes.
	Yes Intent = "yes"
	// No declines the offer.
	No Intent = "no"
	// OptOut asks for no more texts. It must be honoured whatever else the reply says.
	OptOut Intent = "optout"
	// OptIn asks for texts again after an opt-out (START, UNSTOP).
	OptIn Intent = "optin"
	// Help asks for the help text (HELP, INFO).
	Help Intent = "help"
	// Clarify leans towards yes without being one: a reaction to the offer, "maybe",
	// "yes but can it be 4pm?". The customer should be asked again; nothing is booked.
	Clarify Intent = "clarify"
	// CancelRequest asks to cancel the customer's appointment ("cancel my 3pm
	// appointment", "I need to cancel my booking", "tengo que cancelar mi cita", "je dois
	// annuler"). It is no opt-out: the bare carrier keyword CANCEL, the whole reply, is
	// one. To a customer without a booking it says nothing the offer can act on.
	CancelRequest Intent = "cancel_request"
	// Pause asks for no offers for a while (PAUSE, PAUSA): the whole reply, as a
	// keyword. An opt-out wins over it ("pause, no stop it").
	Pause Intent = "pause"
	// Resume asks for offers again after a Pause (RESUME, REANUDAR, REPRENDRE): the
	// whole reply, as a keyword.
	Resume Intent = "resume"
)

// Languages is a set of the supported languages, as bits.
type Languages uint8

// The supported languages.
const (
	English Languages = 1 << iota
	Spanish
	French

	// AllLanguages is every supported language.
	AllLanguages = English | Spanish | French
)

// languageTags are the BCP 47 tags of the languages, in bit order.
var languageTags = [...]string{"en", "es", "fr"}

// Has reports whether l holds every language of x.
func (l Languages) Has(x Languages) bool { return l&x == x }

// Only returns the tag ("en", "es", "fr") of l's language when l holds exactly one.
func (l Languages) Only() (string, bool) {
	if l == 0 || l&(l-1) != 0 || l > AllLanguages {
		return "", false
	}
	return languageTags[bits.TrailingZeros8(uint8(l))], true
}

// Tags returns the tags of l's languages, in the order en, es, fr.
func (l Languages) Tags() []string {
	var tags []string
	for i, t := range languageTags {
		if l&(1<<i) != 0 {
			tags = append(tags, t)
		}
	}
	return tags
}

// String returns l's tags joined by "+" ("en+es"), or "none".
func (l Languages) String() string {
	if l&AllLanguages == 0 {
		return "none"
	}
	return strings.Join(l.Tags(), "+")
}

// Reading is what Read makes of a reply.
type Reading struct {
	// Intent is what the reply asks for.
	Intent Intent
	// Languages are the languages whose rules account for every word of the reply that
	// some rule knows: Spanish for "Sí" or "no gracias", English and Spanish for "no",
	// all three for "ok" or 👍, none for a reply no rule knows a word of, or whose known
	// words belong to no one language together ("yes gracias"). Only when it holds a
	// single language does it say which language the customer writes.
	Languages Languages
	// Loose is true for a Yes made only of loose affirmatives ([yes loose]: "ok", 👍,
	// "sure", "va"): it takes an offer only when the last text the customer was sent is
	// that offer or the question about it; after "taken", "declined" or a confirmation it
	// is an acknowledgement. A Yes with an explicit word ("yes", "book it") is not loose.
	Loose bool
	// Weak is true when Languages rests on nothing but words that more than one language
	// writes ("si", "va", "ya"): no evidence enough to change the language a customer is
	// texted in.
	Weak bool
	// WrongNumber is true for an opt-out that says the number is not the customer's
	// ([reassigned any]: "wrong number", "número equivocado", "mauvais numéro"): the
	// number may have been reassigned, which the shop's owner should know.
	WrongNumber bool
	// CannotCome is true for a reply that says the customer cannot come ([cannot any]:
	// "can't make it", "no puedo ir", "je ne pourrai pas venir"), whatever its Intent (a
	// No, unless something else wins). To a live offer it declines it; from a customer
	// who holds a booking it asks to cancel that booking, which only the caller knows.
	CannotCome bool
}

// Read reads a customer's reply to a live offer. optOutType is Twilio's OptOutType field
// (STOP, START or HELP, sent by Messaging Services with Advanced Opt-Out; empty
// otherwise): Twilio's STOP and HELP win over the words, and a yes that Twilio counted as
// an opt-in (START) is still a yes. Read is safe for concurrent use and does not allocate
// once warm.
func Read(body, optOutType string) Reading {
	if joined, ok := spelledOut(body); ok {
		body = joined
	}
	r := readers.Get().(*reader)
	got := r.read(standard(), body, optOutType)
	if cap(r.text) <= maxPooledBytes {
		readers.Put(r)
	}
	return got
}

// maxPooledBytes keeps a reader that grew on an outsized body out of the pool.
const maxPooledBytes = 16 << 10

var readers = sync.Pool{New: func() any { return new(reader) }}

// reader holds one reading's working memory.
type reader struct {
	scan
	b       *book
	matches []match
	// from[i] is the index in matches of the first match that starts at token i or
	// later; matches are in the order of their start.
	from  []int32
	reach []uint8
	// clauses[c] is the first token of clause c; one more entry ends the last clause.
	clauses []int32
}

// match is a phrase found at tokens [start, end).
type match struct {
	start, end int32
	p          *phrase
}

func (r *reader) read(b *book, body, optOutType string) Reading {
	r.b = b
	r.run(body)
	r.prepare()
	got := r.decide()
	switch t := strings.TrimSpace(optOutType); {
	case strings.EqualFold(t, "STOP"):
		got.Intent = OptOut
	case strings.EqualFold(t, "HELP"):
		got.Intent = Help
	case strings.EqualFold(t, "START"):
		if got.Intent != Yes {
			got.Intent = OptIn
		}
	}
	if got.Intent != Yes {
		got.Loose = false
	}
	return got
}

// prepare finds every phrase of the book in the tokens.
func (r *reader) prepare() {
	n := len(r.toks)
	r.matches = r.matches[:0]
	r.from = r.from[:0]
	r.clauses = r.clauses[:0]
	for i := range n {
		t := &r.toks[i]
		if t.emoji {
			t.filler = !r.b.significant[string(r.word(i))]
		}
		if i == 0 || t.clause != r.toks[i-1].clause {
			r.clauses = append(r.clauses, int32(i))
		}
		r.from = append(r.from, int32(len(r.matches)))
		r.walk(&r.b.root, i, i)
	}
	r.from = append(r.from, int32(len(r.matches)))
	r.clauses = append(r.clauses, int32(n))
}

// walk follows the trie from n along the tokens from i, recording every phrase that
// started at token start and matches.
func (r *reader) walk(n *node, i, start int) {
	for _, p := range n.ends {
		if end, ok := r.matchRest(p.segs[1:], i); ok {
			r.matches = append(r.matches, match{start: int32(start), end: int32(end), p: p})
		}
	}
	if i >= len(r.toks) {
		return
	}
	for _, e := range n.next[string(r.sq(i))] {
		if r.is(i, e.w) {
			r.walk(e.node, i+1, start)
		}
	}
	if n.anyEmoji != nil && r.toks[i].emoji {
		r.walk(n.anyEmoji, i+1, start)
	}
}

func (r *reader) matchSeg(seg []word, i int) (int, bool) {
	if i+len(seg) > len(r.toks) {
		return 0, false
	}
	for j, w := range seg {
		if !r.is(i+j, w) {
			return 0, false
		}
	}
	return i + len(seg), true
}

// matchRest matches the segments after the first, each 0 to maxGap words after the
// one before.
func (r *reader) matchRest(segs [][]word, from int) (int, bool) {
	if len(segs) == 0 {
		return from, true
	}
	for g := 0; g <= maxGap; g++ {
		if end, ok := r.matchSeg(segs[0], from+g); ok {
			if end, ok := r.matchRest(segs[1:], end); ok {
				return end, true
			}
		}
	}
	return 0, false
}

// is reports whether token i is w, or w with letters repeated.
func (r *reader) is(i int, w word) bool {
	if w.anyEmoji {
		return r.toks[i].emoji
	}
	if string(r.sq(i)) != w.sq {
		return false
	}
	got := r.word(i)
	return string(got) == w.text || elongates(got, w.text)
}

// at returns the matches that start at token i.
func (r *reader) at(i int) []match { return r.matches[r.from[i]:r.from[i+1]] }

// decide is the order of precedence described in doc.go.
func (r *reader) decide() Reading {
	n := len(r.toks)
	if n == 0 {
		return Reading{Intent: Unknown}
	}
	if q := r.quoteAt; q > 0 && q <= maxReactPrefix {
		if s, ok := r.reaction(q); ok {
			// Words after the quoted text are the customer's own: an opt-out there is
			// one (`Liked “…” STOP`), whatever the quoted offer says.
			if e := r.quoteEnd; e > q && e < n && r.optOutIn(e, n) {
				return r.reading(slotOptOut, e, n)
			}
			l, weak := r.languages(0, q)
			return Reading{Intent: slotIntent[s], Languages: l, Weak: weak}
		}
		if r.quotesOffer(q, n) {
			// A reaction whose wording no rule knows: the quoted text is the offer, never
			// the customer's words (its "STOP to opt out" is no opt-out, its "Reply YES"
			// no yes). Only the words around it are the customer's: an opt-out there is
			// one; anything else is for a person to read.
			if r.optOutIn(0, q) {
				return r.reading(slotOptOut, 0, q)
			}
			if e := r.quoteEnd; e > q && e < n && r.optOutIn(e, n) {
				return r.reading(slotOptOut, e, n)
			}
			return Reading{Intent: Unknown}
		}
	}
	s := r.intent(n)
	l, weak := r.languages(0, n)
	if s == slotYes && l == 0 && r.crossWord(n) {
		// English "ya" beside Spanish words ("ya gracias") is Spanish "already", not a
		// yes: a yes whose words belong to no one language together, with a word that
		// another language writes otherwise, is asked again.
		s = slotClarify
	}
	got := Reading{Intent: slotIntent[s], Languages: l, Weak: weak}
	switch s {
	case slotYes:
		got.Loose = !r.cover(0, n, slotYes, firm, &withLoose)
	case slotOptOut:
		got.WrongNumber = r.anywhere(slotReassigned)
	}
	got.CannotCome = r.anywhere(slotCannot)
	return got
}

// reading is s with the languages of tokens [lo, hi).
func (r *reader) reading(s slot, lo, hi int) Reading {
	l, weak := r.languages(lo, hi)
	return Reading{Intent: slotIntent[s], Languages: l, Weak: weak}
}

// minQuoted is how many words a quotation must hold to be taken for a quoted offer
// (`I said "no"` quotes the customer's own word).
const minQuoted = 5

// quotesOffer reports whether the q words before the first quotation mark are followed
// by a quotation long enough to be the offer the customer reacts to.
func (r *reader) quotesOffer(q, n int) bool {
	end := n
	if r.quoteEnd > q {
		end = r.quoteEnd
	}
	return end-q >= minQuoted
}

// reaction reads the q words before a quotation as a reaction (`Liked “…”`): the words
// must be a whole [... react] phrase. A negative reaction wins over a positive one.
func (r *reader) reaction(q int) (slot, bool) {
	for _, s := range [...]slot{slotNo, slotClarify, slotUnknown} {
		for _, m := range r.at(0) {
			if int(m.end) == q && m.p.has(s, react) {
				return s, true
			}
		}
	}
	return 0, false
}

func (r *reader) intent(n int) slot {
	if r.optOut(n) {
		return slotOptOut
	}
	if r.cover(0, n, slotHelp, whole, nil) {
		return slotHelp
	}
	if r.cover(0, n, slotOptIn, whole, nil) {
		return slotOptIn
	}
	if r.cover(0, n, slotPause, whole, nil) {
		return slotPause
	}
	if r.cover(0, n, slotResume, whole, nil) {
		return slotResume
	}
	if r.anywhere(slotUnknown) {
		return slotUnknown
	}
	if r.anywhere(slotCancel) {
		return slotCancel
	}
	yes := r.cover(0, n, slotYes, whole, &withYes)
	affirmative := r.leads(slotYes, whole)
	no := r.signal(slotNo)
	unsure := r.signal(slotClarify)
	switch {
	case yes && !r.question && !no && !unsure:
		return slotYes
	case no && (r.leads(slotYes, firm) || yes && r.cover(0, n, slotYes, firm, &withLoose)):
		// "no wait, yes": ask again. A loose "ok" beside a no acknowledges it ("ok, not
		// today", "ok, next time"): a no.
		return slotClarify
	case no:
		return slotNo
	case yes || affirmative || unsure || r.cover(0, n, slotWith, whole, nil):
		return slotClarify
	}
	return slotUnknown
}

// withYes lets [with] phrases stand beside yes phrases ("yes, perfect").
var withYes = [nSlots]kinds{slotWith: whole}

// withLoose lets loose yes phrases and [with] phrases stand beside firm ones ("ok yes").
var withLoose = [nSlots]kinds{slotWith: whole, slotYes: whole}

// crossWord reports whether one of the n words is one that another language writes
// with another meaning (crossWords).
func (r *reader) crossWord(n int) bool {
	for i := range n {
		if crossWords[string(r.word(i))] {
			return true
		}
	}
	return false
}

// crossWords are words that more than one of the languages writes, each with its own
// meaning: English "ya" (yes) is Spanish "already", Spanish "si" (yes) is French "if" as
// well as "yes", "va" is Spanish "OK" and French "goes". Alone they are weak evidence of
// a customer's language (Reading.Weak).
var crossWords = map[string]bool{"ya": true, "si": true, "va": true, "ok": true, "no": true}

// besideStop are the short answers a clause may hold beside an [optout clause] phrase
// when no comma parts them: "yes stop", "no stop", "ok baja" are opt-outs. [no lead]
// phrases are not among them: "para la próxima" is "next time", not "stop, next time".
// The other keywords are short answers too: "pause stop", "help stop", "start stop" and
// "ayuda baja" stop.
var besideStop = [nSlots]kinds{slotYes: whole, slotNo: whole | clause, slotWith: whole, slotPause: whole, slotResume: whole,
	slotHelp: whole, slotOptIn: whole}

// optOut reports whether the reply asks for no more texts: the whole reply, one of its
// clauses, or an [optout any] phrase anywhere.
func (r *reader) optOut(n int) bool {
	if r.anywhere(slotOptOut) || r.leads(slotOptOut, lead) || r.cover(0, n, slotOptOut, whole|clause, nil) {
		return true
	}
	for c := 0; c+1 < len(r.clauses); c++ {
		if r.cover(int(r.clauses[c]), int(r.clauses[c+1]), slotOptOut, clause, &besideStop) {
			return true
		}
	}
	return false
}

// optOutIn is optOut for tokens [lo, hi) alone: the words after a reaction's quoted
// text.
func (r *reader) optOutIn(lo, hi int) bool {
	for _, m := range r.matches[r.from[lo]:] {
		if int(m.end) <= hi && m.p.has(slotOptOut, anywhere) {
			return true
		}
	}
	return r.cover(lo, hi, slotOptOut, whole|clause, &besideStop)
}

// signal reports whether s's phrases speak in the reply: anywhere, at the start of a
// clause, or as a whole clause.
func (r *reader) signal(s slot) bool {
	if r.anywhere(s) || r.leads(s, lead) {
		return true
	}
	for c := 0; c+1 < len(r.clauses); c++ {
		if r.cover(int(r.clauses[c]), int(r.clauses[c+1]), s, whole|clause|lead, nil) {
			return true
		}
	}
	return false
}

// anywhere reports whether an [s any] phrase is in the reply.
func (r *reader) anywhere(s slot) bool {
	for _, m := range r.matches {
		if m.p.has(s, anywhere) {
			return true
		}
	}
	return false
}

// leads reports whether a phrase of s with one of ks starts a clause, after fillers, and
// no longer phrase of another slot starts there ("no problem" is not a "no").
func (r *reader) leads(s slot, ks kinds) bool {
	for c := 0; c+1 < len(r.clauses); c++ {
		p := r.skipFillers(int(r.clauses[c]), int(r.clauses[c+1]))
		if p >= int(r.clauses[c+1]) {
			continue
		}
		own, other := int32(0), int32(0)
		for _, m := range r.at(p) {
			l := m.end - m.start
			if m.p.has(s, ks) {
				own = max(own, l)
			}
			for o, k := range m.p.kinds {
				if slot(o) != s && slot(o) != slotFiller && k&^react != 0 {
					other = max(other, l)
				}
			}
		}
		if own > 0 && own >= other {
			return true
		}
	}
	return false
}

// skipFillers returns the first token at or after p, before end, that is not a filler.
func (r *reader) skipFillers(p, end int) int {
	for p < end {
		if r.toks[p].filler {
			p++
			continue
		}
		next := p
		for _, m := range r.at(p) {
			if int(m.end) <= end && m.p.has(slotFiller, whole) {
				next = max(next, int(m.end))
			}
		}
		if next == p {
			break
		}
		p = next
	}
	return p
}

// cover reports whether tokens [lo, hi) split into phrases of s with one of ks (at least
// one), fillers, emoji without a meaning and phrases also allows (nil: none).
func (r *reader) cover(lo, hi int, s slot, ks kinds, also *[nSlots]kinds) bool {
	const reached, keyed = 1, 2
	r.reach = r.reach[:0]
	for range hi - lo + 1 {
		r.reach = append(r.reach, 0)
	}
	r.reach[0] = reached
	for p := lo; p < hi; p++ {
		state := r.reach[p-lo]
		if state == 0 {
			continue
		}
		if r.toks[p].filler {
			r.reach[p+1-lo] |= state
		}
		for _, m := range r.at(p) {
			if int(m.end) > hi {
				continue
			}
			switch {
			case m.p.has(s, ks):
				r.reach[int(m.end)-lo] |= keyed
			case m.p.has(slotFiller, whole), also != nil && m.p.allowedBy(also):
				r.reach[int(m.end)-lo] |= state
			}
		}
	}
	return r.reach[hi-lo]&keyed != 0
}

// languages intersects the languages of the phrases that account for tokens [lo, hi),
// taking the longest phrase at each token and skipping tokens no phrase knows. weak is
// true when no phrase of one language but a single word of crossWords speaks for it.
func (r *reader) languages(lo, hi int) (_ Languages, weak bool) {
	l, seen, strong := AllLanguages, false, false
	for p := lo; p < hi; {
		var best *match
		for i, m := range r.at(p) {
			if int(m.end) <= hi && (best == nil || m.end > best.end) {
				best = &r.at(p)[i]
			}
		}
		if best == nil {
			p++
			continue
		}
		l &= best.p.langs
		seen = true
		if _, one := best.p.langs.Only(); one && (best.end-best.start > 1 || !crossWords[string(r.word(p))]) {
			strong = true
		}
		p = int(best.end)
	}
	if !seen {
		return 0, false
	}
	return l, !strong
}
