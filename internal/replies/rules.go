package replies

import (
	"embed"
	"fmt"
	"strings"
	"sync"
)

// slot is what a section of the rules is about: an intent, or one of the two kinds of
// word that only ever accompany one ([with] and [filler]).
type slot uint8

const (
	slotUnknown slot = iota
	slotYes
	slotNo
	slotOptOut
	slotOptIn
	slotHelp
	slotClarify
	slotWith
	slotFiller
	// slotReassigned is [reassigned any]: a wrong number ("wrong number", "número
	// equivocado"), an opt-out that also says the number may now be someone else's
	// (Reading.WrongNumber). Its phrases are [optout any] phrases too.
	slotReassigned
	// slotCancel is [cancel any]: the customer asks to cancel their appointment ("cancel
	// my booking", "I need to cancel", "tengo que cancelar mi cita", "je dois annuler"):
	// Reading.Intent CancelRequest.
	slotCancel
	// slotCannot is [cannot any]: the customer cannot come ("can't make it", "no puedo
	// ir", "je ne pourrai pas venir"): to an offer a no, and Reading.CannotCome for one
	// who holds a booking. Its phrases are [no any] phrases too.
	slotCannot
	// slotPause and slotResume are [pause whole] and [resume whole]: the customer asks
	// for no offers for a while (PAUSE, PAUSA), or for offers again (RESUME, REANUDAR,
	// REPRENDRE). Keywords, as HELP and START are: only the whole reply.
	slotPause
	slotResume
	nSlots
)

// slotNames are the names sections use.
var slotNames = [nSlots]string{"unknown", "yes", "no", "optout", "optin", "help", "clarify", "with", "filler", "reassigned", "cancel", "cannot", "pause", "resume"}

// slotIntent is the intent a slot reads as.
var slotIntent = [nSlots]Intent{Unknown, Yes, No, OptOut, OptIn, Help, Clarify, Clarify, Unknown, OptOut, CancelRequest, No, Pause, Resume}

// kinds is a set of the ways a phrase may stand in a reply (see doc.go).
type kinds uint8

const (
	whole kinds = 1 << iota
	clause
	lead
	anywhere
	react
	// firm marks a yes phrase that takes an offer whatever the customer was texted last
	// ("yes", "book it"); a [yes loose] phrase ("ok", 👍, "sure") is whole without it, and
	// takes an offer only as the answer to one (Reading.Loose).
	firm
	// loose is the kind a [yes loose] header names; it is stored as whole.
	loose
)

var kindNames = map[string]kinds{"whole": whole, "clause": clause, "lead": lead, "any": anywhere, "react": react, "loose": loose}

// allowed lists the kinds each slot may take. A yes is only ever a whole reply: it books
// and charges, so no rule may find one inside a longer reply. Help and opt-in are
// keywords, as Twilio reads them.
var allowed = [nSlots]kinds{
	slotUnknown: anywhere | react,
	slotYes:     whole | loose,
	slotNo:      whole | clause | lead | anywhere | react,
	slotOptOut:  whole | clause | lead | anywhere,
	slotOptIn:   whole,
	slotHelp:    whole,
	slotClarify: whole | clause | lead | anywhere | react,
	slotWith:    whole,
	slotFiller:  whole,
	// A wrong number is an opt-out wherever it is said.
	slotReassigned: anywhere,
	// A cancellation request is read wherever it is said, as a late-running note is.
	slotCancel: anywhere,
	// Cannot-come phrases are [no any] phrases that also say so (Reading.CannotCome).
	slotCannot: anywhere,
	// PAUSE and RESUME are keywords: only the whole reply, fillers aside.
	slotPause:  whole,
	slotResume: whole,
}

const (
	// maxGap is how many words a * in a pattern stands for at most ("take me off your
	// texting list").
	maxGap = 3
	// maxReactPrefix is how many words may come before a reaction's quoted text.
	maxReactPrefix = 6
	// maxExpansions caps how many word sequences one pattern line may stand for.
	maxExpansions = 512
)

// word is one position of a phrase.
type word struct {
	text     string // folded, as scan folds a reply's words
	sq       string // text with repeated letters squeezed, the index key
	emoji    bool   // an emoji, such as 👍
	anyEmoji bool   // <emoji>: any emoji token
}

// phrase is one word sequence of the rules, with every section and language that lists it.
type phrase struct {
	// segs are runs of consecutive words; between two of them stand 0 to maxGap words.
	segs  [][]word
	kinds [nSlots]kinds
	langs Languages
}

// meaningful reports whether p is in a section other than [filler].
func (p *phrase) meaningful() bool {
	for s, k := range p.kinds {
		if slot(s) != slotFiller && k != 0 {
			return true
		}
	}
	return false
}

// onlyEmoji reports whether every word of p is an emoji.
func (p *phrase) onlyEmoji() bool {
	for _, seg := range p.segs {
		for _, w := range seg {
			if !w.emoji && !w.anyEmoji {
				return false
			}
		}
	}
	return true
}

// allowedBy reports whether p is in a slot with a kind that also lists.
func (p *phrase) allowedBy(also *[nSlots]kinds) bool {
	for s, k := range p.kinds {
		if k&also[s] != 0 {
			return true
		}
	}
	return false
}

// has reports whether p is in slot s with one of ks.
func (p *phrase) has(s slot, ks kinds) bool { return p.kinds[s]&ks != 0 }

// book is the compiled rules of every language.
type book struct {
	// root is a trie over the first segment of every phrase.
	root node
	// significant holds the emoji a rule gives a meaning to; any other emoji is a filler.
	significant map[string]bool
}

// node is a trie node: the phrases whose first segment ends here, and the words that
// continue one.
type node struct {
	ends []*phrase
	// next is keyed by the squeezed word; words that squeeze alike ("pas", "pass") share
	// a key and each keep an edge.
	next     map[string][]edge
	anyEmoji *node // <emoji>
}

type edge struct {
	w    word
	node *node
}

// add puts p in the trie under the words of its first segment.
func (n *node) add(p *phrase) {
	for _, w := range p.segs[0] {
		n = n.child(w)
	}
	n.ends = append(n.ends, p)
}

func (n *node) child(w word) *node {
	if w.anyEmoji {
		if n.anyEmoji == nil {
			n.anyEmoji = &node{}
		}
		return n.anyEmoji
	}
	for _, e := range n.next[w.sq] {
		if e.w.text == w.text {
			return e.node
		}
	}
	if n.next == nil {
		n.next = map[string][]edge{}
	}
	c := &node{}
	n.next[w.sq] = append(n.next[w.sq], edge{w: w, node: c})
	return c
}

//go:embed rules/*.txt
var ruleFS embed.FS

// ruleFiles are the embedded rules, one file per supported language.
var ruleFiles = []struct {
	lang Languages
	name string
}{
	{English, "rules/en.txt"},
	{Spanish, "rules/es.txt"},
	{French, "rules/fr.txt"},
}

// standard is the book compiled from the embedded rules, on first use. The rules are
// checked by the package's tests, so a failure here is a build that should not ship.
var standard = sync.OnceValue(func() *book {
	var files []ruleFile
	for _, f := range ruleFiles {
		b, err := ruleFS.ReadFile(f.name)
		if err != nil {
			panic("replies: " + err.Error())
		}
		files = append(files, ruleFile{lang: f.lang, name: f.name, text: string(b)})
	}
	bk, err := compile(files)
	if err != nil {
		panic("replies: " + err.Error())
	}
	return bk
})

// ruleFile is the text of one language's rules.
type ruleFile struct {
	lang Languages
	name string
	text string
}

// element is one position of an expanded pattern: a word or a gap.
type element struct {
	w   word
	gap bool
}

// compile parses the rule files into one book.
func compile(files []ruleFile) (*book, error) {
	byKey := map[string]*phrase{}
	var order []*phrase
	var sc scan
	for _, f := range files {
		var sec slot
		var kind kinds
		inSection := false
		for n, line := range strings.Split(f.text, "\n") {
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			where := fmt.Sprintf("%s:%d", f.name, n+1)
			if isHeader(line) {
				var err error
				if sec, kind, err = header(line); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				inSection = true
				continue
			}
			if !inSection {
				return nil, fmt.Errorf("%s: a pattern before any [section]", where)
			}
			seqs, err := expand(&sc, line, kind)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", where, line, err)
			}
			for _, seq := range seqs {
				key := seqKey(seq)
				p := byKey[key]
				if p == nil {
					p = &phrase{segs: segments(seq)}
					byKey[key] = p
					order = append(order, p)
				}
				switch {
				case sec == slotYes && kind == loose:
					p.kinds[sec] |= whole
				case sec == slotYes:
					p.kinds[sec] |= kind | firm
				case sec == slotReassigned:
					p.kinds[sec] |= kind
					p.kinds[slotOptOut] |= anywhere
				case sec == slotCannot:
					p.kinds[sec] |= kind
					p.kinds[slotNo] |= anywhere
				default:
					p.kinds[sec] |= kind
				}
				p.langs |= f.lang
				if p.onlyEmoji() {
					p.langs = AllLanguages // 👍 is no one language's word
				}
			}
		}
	}
	b := &book{significant: map[string]bool{}}
	for _, p := range order {
		b.root.add(p)
		if !p.meaningful() {
			continue
		}
		for _, seg := range p.segs {
			for _, w := range seg {
				if w.emoji {
					b.significant[w.text] = true
				}
			}
		}
	}
	return b, nil
}

// isHeader tells a section header from a pattern that starts with an optional word
// ("[oh] yes"): a header is the whole line in brackets, with no | or bracket inside.
func isHeader(line string) bool {
	return strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") &&
		!strings.ContainsAny(line[1:len(line)-1], "[]|")
}

// header parses "[intent kind]", "[with]" or "[filler]".
func header(line string) (slot, kinds, error) {
	f := strings.Fields(line[1 : len(line)-1])
	s, ok := slotByName(firstOr(f))
	switch {
	case !ok:
		return 0, 0, fmt.Errorf("unknown section %q (want one of %v)", firstOr(f), slotNames)
	case (s == slotWith || s == slotFiller) && len(f) == 1:
		return s, whole, nil
	case len(f) != 2 || s == slotWith || s == slotFiller:
		return 0, 0, fmt.Errorf("want [intent kind], [with] or [filler]")
	}
	k, ok := kindNames[f[1]]
	switch {
	case !ok:
		return 0, 0, fmt.Errorf("unknown kind %q (want whole, clause, lead, any, react or loose)", f[1])
	case allowed[s]&k == 0:
		return 0, 0, fmt.Errorf("%s may not be %s", f[0], f[1])
	}
	return s, k, nil
}

func firstOr(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func slotByName(name string) (slot, bool) {
	for s, n := range slotNames {
		if n == name {
			return slot(s), true
		}
	}
	return 0, false
}

// expand turns a pattern line into the word sequences it stands for.
func expand(sc *scan, line string, kind kinds) ([][]element, error) {
	seqs := [][]element{nil}
	for _, field := range strings.Fields(line) {
		var alts []element
		optional := false
		switch {
		case field == "*":
			if kind != anywhere {
				return nil, fmt.Errorf("* only in [... any] sections")
			}
			alts = []element{{gap: true}}
		case field == "<emoji>":
			if kind != react {
				return nil, fmt.Errorf("<emoji> only in [... react] sections")
			}
			alts = []element{{w: word{anyEmoji: true}}}
		default:
			if strings.HasPrefix(field, "[") && strings.HasSuffix(field, "]") {
				optional = true
				field = field[1 : len(field)-1]
			}
			if strings.ContainsAny(field, "[]<>*") {
				return nil, fmt.Errorf("%q: brackets, <emoji> and * stand alone", field)
			}
			for _, alt := range strings.Split(field, "|") {
				w, err := ruleWord(sc, alt)
				if err != nil {
					return nil, err
				}
				alts = append(alts, element{w: w})
			}
		}
		var next [][]element
		for _, s := range seqs {
			if optional {
				next = append(next, s)
			}
			for _, a := range alts {
				next = append(next, append(s[:len(s):len(s)], a))
			}
		}
		if len(next) > maxExpansions {
			return nil, fmt.Errorf("stands for more than %d word sequences", maxExpansions)
		}
		seqs = next
	}
	for _, s := range seqs {
		switch {
		case len(s) == 0:
			return nil, fmt.Errorf("can be empty")
		case s[0].gap || s[len(s)-1].gap:
			return nil, fmt.Errorf("* at an end")
		}
		for i := 1; i < len(s); i++ {
			if s[i].gap && s[i-1].gap {
				return nil, fmt.Errorf("two * in a row")
			}
		}
	}
	return seqs, nil
}

// ruleWord folds one word of a pattern as a reply's word is folded; it must stay one word.
func ruleWord(sc *scan, s string) (word, error) {
	sc.run(s)
	if len(sc.toks) != 1 || sc.quoteAt >= 0 {
		return word{}, fmt.Errorf("%q is not one word (write words apart, alternatives with |)", s)
	}
	return word{text: string(sc.word(0)), sq: string(sc.sq(0)), emoji: sc.toks[0].emoji}, nil
}

func segments(seq []element) [][]word {
	var segs [][]word
	var cur []word
	for _, e := range seq {
		if e.gap {
			segs = append(segs, cur)
			cur = nil
			continue
		}
		cur = append(cur, e.w)
	}
	return append(segs, cur)
}

func seqKey(seq []element) string {
	var b strings.Builder
	for _, e := range seq {
		switch {
		case e.gap:
			b.WriteString("* ")
		case e.w.anyEmoji:
			b.WriteString("<emoji> ")
		default:
			b.WriteString(e.w.text)
			b.WriteByte(' ')
		}
	}
	return b.String()
}
