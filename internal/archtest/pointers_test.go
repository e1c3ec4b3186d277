package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside matches a citation of the design, style and facts pages the team keeps outside
// the repository (by section sign, file name or the shared folder): a reader of the code
// cannot follow it. TestOutsideMatches shows what it matches.
var outside = regexp.MustCompile(`\bDESIGN(\.md| ?§)|\bSTYLE\.md\b|\bFACTS\.md\b|\.\./shared/`)

// TestNoPointerOutsideTheRepository: no Go comment, and no Markdown page of the
// repository, sends its reader to a file the repository does not hold.
func TestNoPointerOutsideTheRepository(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	for _, p := range modulePackages(t) {
		var names []string
		names = append(names, p.GoFiles...)
		names = append(names, p.TestGoFiles...)
		names = append(names, p.XTestGoFiles...)
		for _, name := range names {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("parse %s: %v", name, err)
				continue
			}
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					if m := outside.FindString(c.Text); m != "" {
						pos := fset.Position(c.Pos())
						rel, _ := filepath.Rel(root, pos.Filename)
						t.Errorf("%s:%d: a comment cites %q, which is not in the repository", filepath.ToSlash(rel), pos.Line, m)
					}
				}
			}
		}
	}
	var pages []string
	for _, pattern := range []string{"*.md", "docs/*.md"} {
		found, _ := filepath.Glob(filepath.Join(root, pattern))
		pages = append(pages, found...)
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, page)
				t.Errorf("%s:%d cites %q, which is not in the repository", filepath.ToSlash(rel), i+1, m)
			}
		}
	}
}

func TestOutsideMatches(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"// keeps the direction of " + "DESIGN §2":     true,
		"// see " + "DESIGN§5":                         true,
		"// the key format of " + "DESIGN" + " §5":     true,
		"as " + "STYLE" + ".md says":                   true,
		"This follows `../" + "shared/DESIGN" + ".md`": true,
		"FACTS" + ".md":                                true,
		"docs/design.md and docs/architecture.md":      false,
		"the starting design's list":                   false,
		"const DESIGNATED = 1":                         false,
	} {
		if got := outside.MatchString(s); got != want {
			t.Errorf("outside.MatchString(%q) = %v, want %v", s, got, want)
		}
	}
}
