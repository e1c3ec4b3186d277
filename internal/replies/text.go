package replies

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// token is one word or one emoji of a reply, as offsets into scan's buffers (a token never
// holds a string of its own, so reading a reply allocates nothing once the buffers have
// grown).
type token struct {
	start, end     int32 // the folded word in scan.text
	sqStart, sqEnd int32 // the word with repeated letters squeezed, in scan.squeezed
	clause         int32 // which clause (run of words between . , ! ? ; : and line breaks)
	emoji          bool  // a symbol such as 👍, skin tone and variation selector dropped
	filler         bool  // an emoji no rule gives a meaning to ("yes 🎈" is "yes")
}

// scan splits a reply into tokens. Words are folded: compatibility-decomposed (NFKD, so
// "ＹＥＳ" is "yes"), accents and other marks dropped ("sí" is "si", "arrêt" is "arret"),
// lower-cased, and apostrophes removed inside them ("can't" is "cant", "d'accord" is
// "daccord"). Everything else but emoji separates words.
type scan struct {
	text     []byte
	squeezed []byte
	toks     []token
	// question is set by ? or ¿ anywhere in the reply.
	question bool
	// quoteAt is the number of tokens before the first opening quotation mark, or -1: a
	// reaction is a few words, then the quoted text it reacts to.
	quoteAt int
	// quoteEnd is the number of tokens before the last quotation mark after the first,
	// or -1: what follows a reaction's quoted text is the customer's own words again
	// (`Liked “…” STOP`).
	quoteEnd int

	clause int32
	inWord bool
	last   rune // the last letter written into the current word
	cur    token
}

func (s *scan) reset() {
	s.text = s.text[:0]
	s.squeezed = s.squeezed[:0]
	s.toks = s.toks[:0]
	s.question = false
	s.quoteAt = -1
	s.quoteEnd = -1
	s.clause = 0
	s.inWord = false
}

// run scans body, which need not be valid UTF-8 (an invalid byte separates words).
func (s *scan) run(body string) {
	s.reset()
	for i := 0; i < len(body); {
		if c := body[i]; c < utf8.RuneSelf {
			s.ascii(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(body[i:])
		s.nonASCII(r, body[i:i+size])
		i += size
	}
	s.endWord()
}

func (s *scan) ascii(c byte) {
	switch {
	case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		s.letter(rune(c))
	case 'A' <= c && c <= 'Z':
		s.letter(rune(c + 'a' - 'A'))
	case c == '\'' || c == '`':
		// An apostrophe joins ("can't", "d'accord") and is dropped anywhere else.
	case c == '"':
		s.quote()
	case c == '?':
		s.question = true
		s.breakClause()
	case c == '.' || c == '!' || c == ',' || c == ';' || c == ':' || c == '\n' || c == '\r':
		s.breakClause()
	default:
		s.endWord()
	}
}

func (s *scan) nonASCII(r rune, enc string) {
	switch r {
	case '’', '‘', 'ʼ', '´', '′', 'ʻ':
		return // apostrophes, typed or substituted by a phone's smart punctuation
	case '“', '”', '„', '‟', '«', '»', '〝', '〞':
		s.quote()
		return
	case '¿':
		s.question = true
		s.breakClause()
		return
	case '¡':
		s.breakClause()
		return
	case utf8.RuneError:
		s.endWord()
		return
	}
	if 0x1F3FB <= r && r <= 0x1F3FF {
		return // skin tone: 👍🏽 is 👍
	}
	if d := norm.NFKD.PropertiesString(enc).Decomposition(); d != nil {
		// The tables hold full decompositions: é is e and a combining acute accent.
		for len(d) > 0 {
			dr, n := utf8.DecodeRune(d)
			d = d[n:]
			if dr < utf8.RuneSelf {
				s.ascii(byte(dr))
			} else {
				s.folded(dr)
			}
		}
		return
	}
	s.folded(r)
}

// folded classifies a non-ASCII rune that has no decomposition.
func (s *scan) folded(r rune) {
	switch {
	case unicode.IsMark(r):
		// Accents, variation selectors (❤️ is ❤), enclosing keycaps: dropped inside words.
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		s.letter(unicode.ToLower(r))
	case unicode.Is(unicode.So, r):
		s.emoji(r)
	default:
		s.endWord()
	}
}

func (s *scan) letter(r rune) {
	if !s.inWord {
		s.inWord = true
		s.cur = token{start: int32(len(s.text)), sqStart: int32(len(s.squeezed)), clause: s.clause}
		s.last = -1
	}
	s.text = utf8.AppendRune(s.text, r)
	if r != s.last {
		s.squeezed = utf8.AppendRune(s.squeezed, r)
		s.last = r
	}
}

func (s *scan) endWord() {
	if !s.inWord {
		return
	}
	s.inWord = false
	s.cur.end = int32(len(s.text))
	s.cur.sqEnd = int32(len(s.squeezed))
	s.toks = append(s.toks, s.cur)
}

func (s *scan) emoji(r rune) {
	s.endWord()
	t := token{start: int32(len(s.text)), sqStart: int32(len(s.squeezed)), clause: s.clause, emoji: true}
	s.text = utf8.AppendRune(s.text, r)
	s.squeezed = utf8.AppendRune(s.squeezed, r)
	t.end, t.sqEnd = int32(len(s.text)), int32(len(s.squeezed))
	s.toks = append(s.toks, t)
}

func (s *scan) breakClause() {
	s.endWord()
	if n := len(s.toks); n > 0 && s.toks[n-1].clause == s.clause {
		s.clause++
	}
}

func (s *scan) quote() {
	s.endWord()
	if s.quoteAt < 0 {
		s.quoteAt = len(s.toks)
		return
	}
	s.quoteEnd = len(s.toks)
}

// word returns token i's folded text. The conversion to string in a comparison or a map
// index does not allocate.
func (s *scan) word(i int) []byte { t := s.toks[i]; return s.text[t.start:t.end] }

// sq returns token i's folded text with repeated letters squeezed ("yesss" → "yes").
func (s *scan) sq(i int) []byte { t := s.toks[i]; return s.squeezed[t.sqStart:t.sqEnd] }

// elongates reports whether got spells want with some letters repeated ("yesss" and
// "yees" for "yes", "okkk" for "ok", but not "pas" for "pass"). The caller has checked
// that both squeeze to the same letters.
func elongates(got []byte, want string) bool {
	i, j := 0, 0
	for j < len(want) {
		w, _ := utf8.DecodeRuneInString(want[j:])
		wantRun := 0
		for j < len(want) {
			r, n2 := utf8.DecodeRuneInString(want[j:])
			if r != w {
				break
			}
			wantRun++
			j += n2
		}
		gotRun := 0
		for i < len(got) {
			r, n2 := utf8.DecodeRune(got[i:])
			if r != w {
				break
			}
			gotRun++
			i += n2
		}
		if gotRun < wantRun {
			return false
		}
	}
	return i == len(got)
}

// spelledOut joins the words a reply spells out letter by letter ("S T O P",
// "s.t.o.p please", "Y E S BAJA"): a run of at least three letters, each alone between
// separators (spaces, dots, dashes, underscores), or a whole reply of two ("N O").
// Shorter runs stay as they are: "y a las 5" is Spanish. Only a reply with such a run
// allocates.
func spelledOut(body string) (string, bool) {
	type run struct{ start, end, letters int }
	var (
		found  bool
		cur    run
		runs   [4]run
		nRuns  int
		single = func(i int) bool { // body[i:] starts a letter that stands alone ("P" in "S T O P!")
			c, size := utf8.DecodeRuneInString(body[i:])
			if !unicode.IsLetter(c) {
				return false
			}
			if i > 0 {
				p, _ := utf8.DecodeLastRuneInString(body[:i])
				if !isFrame(p) {
					return false
				}
			}
			if i+size < len(body) {
				n, _ := utf8.DecodeRuneInString(body[i+size:])
				if !isFrame(n) {
					return false
				}
			}
			return true
		}
	)
	flush := func() {
		if cur.letters >= 3 || (cur.letters == 2 && strings.TrimFunc(body[:cur.start], isFrame) == "" && strings.TrimFunc(body[cur.end:], isFrame) == "") {
			found = true
			if nRuns < len(runs) {
				runs[nRuns] = cur
				nRuns++
			}
		}
		cur = run{}
	}
	for i := 0; i < len(body); {
		c, size := utf8.DecodeRuneInString(body[i:])
		switch {
		case single(i):
			if cur.letters == 0 {
				cur.start = i
			}
			cur.letters++
			cur.end = i + size
		case isSpellSep(c):
		default:
			if cur.letters > 0 {
				flush()
			}
		}
		i += size
	}
	if cur.letters > 0 {
		flush()
	}
	if !found {
		return "", false
	}
	var b strings.Builder
	last := 0
	for _, r := range runs[:nRuns] {
		b.WriteString(body[last:r.start])
		for _, c := range body[r.start:r.end] {
			if unicode.IsLetter(c) {
				b.WriteRune(c)
			}
		}
		last = r.end
	}
	b.WriteString(body[last:])
	return b.String(), true
}

// isSpellSep is what stands between the letters of a word spelled out.
func isSpellSep(c rune) bool { return c == ' ' || c == '.' || c == '-' || c == '_' || c == '\t' }

// isFrame is what may stand around a whole reply of two letters spelled out ("  N O! "
// is "N O"): separators, line breaks and the marks of a shout or a question.
func isFrame(c rune) bool {
	return isSpellSep(c) || c == '\n' || c == '\r' || c == '!' || c == '?' || c == '¡' || c == '¿'
}
