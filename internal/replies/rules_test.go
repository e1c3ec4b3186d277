package replies

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompileRejects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, text, err string }{
		{"pattern before a section", "yes", "before any [section]"},
		{"unknown intent", "[maybe whole]\nx", "unknown section"},
		{"unknown kind", "[no sometimes]\nx", "unknown kind"},
		{"yes found inside a reply", "[yes any]\nyes", "yes may not be any"},
		{"yes at the start of a reply", "[yes lead]\nyes", "yes may not be lead"},
		{"help anywhere", "[help any]\nhelp", "help may not be any"},
		{"filler with a kind", "[filler whole]\nplease", "want [intent kind]"},
		{"unclosed header", "[no whole\nx", "before any [section]"},
		{"stray bracket", "[no whole]\n[no thanks", "stand alone"},
		{"pattern that starts with an optional word", "[no lead]\nno\n[oh|ah] [no]", "can be empty"},
		{"gap outside any", "[no lead]\nnot * today", "* only in"},
		{"gap at an end", "[no any]\nnot *", "* at an end"},
		{"two gaps", "[no any]\nnot * * today", "two * in a row"},
		{"emoji wildcard outside react", "[no whole]\n<emoji>", "<emoji> only in"},
		{"two words in one alternative", "[no whole]\nno|no-thanks", "not one word"},
		{"too many sequences", "[no whole]\n" + strings.Repeat("a|b|c ", 7), "more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := compile([]ruleFile{{lang: English, name: "t.txt", text: c.text}})
			require.ErrorContains(t, err, c.err)
			require.ErrorContains(t, err, "t.txt:")
		})
	}
}

func TestCompileMerges(t *testing.T) {
	t.Parallel()
	b, err := compile([]ruleFile{
		{lang: English, name: "en.txt", text: "[no lead]\nno  # a comment\n[no whole]\nno|nope [thanks]\n"},
		{lang: Spanish, name: "es.txt", text: "[no lead]\nno\n[filler]\n🙏\n[clarify react]\nle gusto\n"},
	})
	require.NoError(t, err)
	no := b.root.next["no"][0].node
	require.Len(t, no.ends, 1)
	require.Equal(t, English|Spanish, no.ends[0].langs)
	require.Equal(t, lead|whole, no.ends[0].kinds[slotNo])
	thanks := no.next["thanks"][0].node
	require.Equal(t, English, thanks.ends[0].langs, "no thanks")
	require.Len(t, b.root.next["nope"][0].node.ends, 1)
	require.False(t, b.significant["🙏"], "an emoji only a filler has no meaning")
}

func TestStandardRulesCompile(t *testing.T) {
	t.Parallel()
	b := standard()
	require.NotEmpty(t, b.root.next)
	require.True(t, b.significant["👍"])
	require.True(t, b.significant["👎"])
	require.False(t, b.significant["🙂"])
}

// TestRulePhrasesReadAsTheirSection reads every gapless phrase of the embedded rules
// alone: a [yes whole] phrase must read as yes, an opt-out phrase as an opt-out, and so
// on, so that no two sections claim the same words without anyone noticing.
func TestRulePhrasesReadAsTheirSection(t *testing.T) {
	t.Parallel()
	b := standard()
	seen := map[*phrase]bool{}
	check := func(p *phrase) {
		if seen[p] || len(p.segs) > 1 {
			return
		}
		seen[p] = true
		var words []string
		for _, w := range p.segs[0] {
			if w.anyEmoji {
				return
			}
			words = append(words, w.text)
		}
		body := strings.Join(words, " ")
		got := Read(body, "").Intent
		switch {
		case p.meaningful() && p.kinds[slotOptOut] != 0:
			require.Equal(t, OptOut, got, "%q", body)
		case p.kinds[slotUnknown]&anywhere != 0:
			require.Equal(t, Unknown, got, "%q", body)
		case p.kinds[slotHelp] != 0:
			require.Equal(t, Help, got, "%q", body)
		case p.kinds[slotOptIn] != 0:
			require.Equal(t, OptIn, got, "%q", body)
		case p.kinds[slotYes] != 0:
			require.Equal(t, Yes, got, "%q", body)
		case p.kinds[slotNo]&^react != 0:
			require.Equal(t, No, got, "%q", body)
		case p.kinds[slotClarify]&^react != 0, p.kinds[slotWith] != 0:
			require.Equal(t, Clarify, got, "%q", body)
		case p.kinds[slotFiller] != 0:
			require.Equal(t, Unknown, got, "a filler alone says nothing: %q", body)
		}
	}
	var visit func(n *node)
	visit = func(n *node) {
		for _, p := range n.ends {
			check(p)
		}
		for _, es := range n.next {
			for _, e := range es {
				visit(e.node)
			}
		}
	}
	visit(&b.root)
}

func TestFolding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"Sí", "si"},
		{"ARRÊTEZ", "arretez"},
		{"d’accord", "daccord"},
		{"Can't", "cant"},
		{"don´t", "dont"},
		{"ＹＥＳ", "yes"},
		{"ﬁne", "fine"},
		{"👍🏽👍", "👍 👍"},
		{"❤️", "❤"},
		{"opt-out", "opt out"},
		{"ñandú", "nandu"},
		{"e\u0301", "e"},
		{"yes\xffno", "yes no"},
		{"3pm", "3pm"},
	} {
		var s scan
		s.run(c.in)
		var got []string
		for i := range s.toks {
			got = append(got, string(s.word(i)))
		}
		require.Equal(t, c.want, strings.Join(got, " "), "%q", c.in)
	}
}

func TestScanClausesQuestionsQuotes(t *testing.T) {
	t.Parallel()
	var s scan
	s.run("Yes, but at 5?")
	require.True(t, s.question)
	require.Equal(t, int32(0), s.toks[0].clause)
	require.Equal(t, int32(1), s.toks[1].clause)
	require.Equal(t, -1, s.quoteAt)
	s.run("¿Sí?")
	require.True(t, s.question)
	s.run("Liked “Reply YES”")
	require.Equal(t, 1, s.quoteAt)
	s.run("yes.\n\nno")
	require.Equal(t, int32(1), s.toks[1].clause, "empty clauses are not counted")
}

func TestElongates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		got, want string
		ok        bool
	}{
		{"yes", "yes", true},
		{"yesss", "yes", true},
		{"yyeess", "yes", true},
		{"okkk", "ok", true},
		{"kk", "k", true},
		{"siiií", "si", false}, // not folded: the caller folds first
		{"pas", "pass", false},
		{"pass", "pas", true},
		{"bok", "book", false},
		{"yesno", "yes", false},
	} {
		require.Equal(t, c.ok, elongates([]byte(c.got), c.want), "%q for %q", c.got, c.want)
	}
}
