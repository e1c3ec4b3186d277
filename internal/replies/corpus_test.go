package replies_test

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotrecovery/slotrecovery/internal/replies"
)

// corpusFile holds the labelled replies; its header describes the format.
const corpusFile = "testdata/corpus.txt"

// minAccuracy is the share of the corpus that must read as labelled. A wrong yes or a
// missed opt-out fails the test on its own, whatever the accuracy.
const minAccuracy = 0.95

// intents in the order the tables print them.
var intents = []replies.Intent{
	replies.Yes, replies.No, replies.OptOut, replies.OptIn, replies.Help, replies.Clarify, replies.CancelRequest,
	replies.Pause, replies.Resume, replies.Unknown,
}

type labelled struct {
	line  int
	want  replies.Intent
	lang  string
	reply string
}

func loadCorpus(t *testing.T) []labelled { return loadCorpusB(t) }

// loadCorpusB reads the corpus for a test or a benchmark.
func loadCorpusB(t testing.TB) []labelled {
	t.Helper()
	f, err := os.Open(corpusFile)
	require.NoError(t, err)
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 3, "%s:%d: want label, lang, reply", corpusFile, n)
		want := replies.Intent(f[0])
		require.Contains(t, intents, want, "%s:%d: unknown label", corpusFile, n)
		require.Contains(t, []string{"en", "es", "fr"}, f[1], "%s:%d: unknown language", corpusFile, n)
		rest := strings.TrimSpace(line[len(f[0]):])
		rest = strings.TrimSpace(rest[len(f[1]):])
		out = append(out, labelled{line: n, want: want, lang: f[1], reply: strings.ReplaceAll(rest, `\n`, "\n")})
	}
	require.NoError(t, sc.Err())
	return out
}

// TestCorpus reads every labelled reply. It fails on any reply read as yes that is not
// labelled yes (a false yes books and charges) and on any opt-out read as anything else
// (a missed opt-out breaks the law), and prints precision and recall per intent (run with
// -v to see them).
func TestCorpus(t *testing.T) {
	t.Parallel()
	corpus := loadCorpus(t)
	require.GreaterOrEqual(t, len(corpus), 300)

	type tally struct{ labelled, read, right int }
	tallies := map[replies.Intent]*tally{}
	for _, in := range intents {
		tallies[in] = &tally{}
	}
	sizes := map[string]map[replies.Intent]int{}
	var misreads []string
	right := 0
	for _, c := range corpus {
		got := replies.Read(c.reply, "").Intent
		if sizes[c.lang] == nil {
			sizes[c.lang] = map[replies.Intent]int{}
		}
		sizes[c.lang][c.want]++
		tallies[c.want].labelled++
		tallies[got].read++
		where := fmt.Sprintf("%s:%d", corpusFile, c.line)
		switch {
		case got == c.want:
			tallies[got].right++
			right++
		case got == replies.Yes:
			t.Errorf("%s: wrong yes: %q is labelled %s but read as yes", where, c.reply, c.want)
		case c.want == replies.OptOut:
			t.Errorf("%s: missed opt-out: %q is labelled optout but read as %s", where, c.reply, got)
		default:
			misreads = append(misreads, fmt.Sprintf("%s: %q is labelled %s, read as %s", where, c.reply, c.want, got))
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "corpus: %d replies\n%-8s", len(corpus), "lang")
	for _, in := range intents {
		fmt.Fprintf(&b, " %8s", in)
	}
	fmt.Fprintf(&b, " %8s\n", "total")
	langs := []string{"en", "es", "fr"}
	for _, l := range langs {
		fmt.Fprintf(&b, "%-8s", l)
		total := 0
		for _, in := range intents {
			fmt.Fprintf(&b, " %8d", sizes[l][in])
			total += sizes[l][in]
		}
		fmt.Fprintf(&b, " %8d\n", total)
	}
	fmt.Fprintf(&b, "\n%-8s %8s %8s %8s %9s %7s\n", "intent", "labelled", "read as", "right", "precision", "recall")
	for _, in := range intents {
		tl := tallies[in]
		fmt.Fprintf(&b, "%-8s %8d %8d %8d %9s %7s\n", in, tl.labelled, tl.read, tl.right,
			ratio(tl.right, tl.read), ratio(tl.right, tl.labelled))
	}
	accuracy := float64(right) / float64(len(corpus))
	fmt.Fprintf(&b, "accuracy %d/%d = %.3f", right, len(corpus), accuracy)
	t.Log("\n" + b.String())
	slices.Sort(misreads)
	for _, m := range misreads {
		t.Log("misread (safe): " + m)
	}
	require.GreaterOrEqual(t, accuracy, minAccuracy, "the rules read too little of the corpus as labelled")
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}
