package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// textJobLiterals returns where a Go file builds a jobs.Text with fields (an empty one,
// jobs.Text{}.Kind(), names the job's kind and queues nothing).
func textJobLiterals(fset *token.FileSet, f *ast.File) []string {
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || len(lit.Elts) == 0 {
			return true
		}
		sel, ok := lit.Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Text" {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "jobs" {
			pos := fset.Position(lit.Pos())
			found = append(found, fmt.Sprintf("%s:%d builds a jobs.Text", filepath.Base(pos.Filename), pos.Line))
		}
		return true
	})
	return found
}

// TestOneWayToQueueAText: a text is queued only through inbox.Queue, which records it in
// the shop's conversation with its recipient as it queues it; no other package builds
// the job itself (and so forgets the record, or records it by hand). Tests may.
func TestOneWayToQueueAText(t *testing.T) {
	t.Parallel()
	for _, p := range modulePackages(t) {
		if within(p.Rel, "internal/inbox", "internal/jobs") {
			continue
		}
		for _, name := range p.GoFiles {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("parse %s: %v", name, err)
				continue
			}
			for _, msg := range textJobLiterals(fset, f) {
				t.Errorf("%s: %s: queue it with inbox.Queue", p.Rel, msg)
			}
		}
	}
}

// TestOneWayToQueueATextCatches shows the rule at work on a made-up file.
func TestOneWayToQueueATextCatches(t *testing.T) {
	t.Parallel()
	src := `package ledger
func f() {
	_ = jobs.Text{}.Kind()
	_, _ = q.InsertTx(ctx, tx, jobs.Text{Key: "k", Body: "hi"}, nil)
	_ = other.Text{Key: "k"}
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := textJobLiterals(fset, f)
	if len(got) != 1 || got[0] != "x.go:4 builds a jobs.Text" {
		t.Fatalf("found %q, want the one literal on line 4", got)
	}
}
