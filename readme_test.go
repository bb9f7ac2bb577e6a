package lease_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsListEveryCode reads the Code constants from errors.go and checks
// that the error tables of README.md and docs/semantics.md list each of
// them, so that a new code cannot be left out of the docs.
func TestDocsListEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	require.NoError(t, err)
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || types(vs.Type) != "Code" {
			return true
		}
		for _, v := range vs.Values {
			if lit, ok := v.(*ast.BasicLit); ok {
				code, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				codes = append(codes, code)
			}
		}
		return true
	})
	require.NotEmpty(t, codes)
	for _, doc := range []string{"README.md", "docs/semantics.md"} {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, code := range codes {
			row := regexp.MustCompile("(?m)^\\| `" + code + "` \\|")
			assert.Regexp(t, row, string(b), "%s has no table row for %s", doc, code)
		}
	}
}

// TestErrorsDocListsEveryCode checks that docs/errors.md has a table row
// for every code of every package of this module.
func TestErrorsDocListsEveryCode(t *testing.T) {
	b, err := os.ReadFile("docs/errors.md")
	require.NoError(t, err)
	n := 0
	for _, file := range []string{"errors.go", "lock/errors.go", "lock/election/errors.go", "claim/errors.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(node ast.Node) bool {
			vs, ok := node.(*ast.ValueSpec)
			if !ok || vs.Type == nil {
				return true
			}
			if sel, ok := vs.Type.(*ast.SelectorExpr); !(ok && sel.Sel.Name == "Code") && types(vs.Type) != "Code" {
				return true
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					code, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					n++
					assert.Regexp(t, regexp.MustCompile("(?m)^\\| `"+code+"` \\|"), string(b), "docs/errors.md has no row for %s (%s)", code, file)
				}
			}
			return true
		})
	}
	assert.GreaterOrEqual(t, n, 14)
}

func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestReadmeProgramRuns extracts the README's first Go sample, a complete
// program, into a directory of this module, and builds and runs it with
// the go command: an outsider pasting it into a file gets a program that
// compiles and prints what the README says.
func TestReadmeProgramRuns(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(string(b))
	require.NotNil(t, m, "README.md has no Go sample")
	require.True(t, strings.HasPrefix(m[1], "package main\n"), "the README's first sample is a complete program")
	out := regexp.MustCompile("(?s)prints\n\n```\n(.*?)```").FindStringSubmatch(string(b))
	require.NotNil(t, out, "README.md says what the program prints")

	dir, err := os.MkdirTemp(".", "_readme-")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, os.RemoveAll(dir)) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(m[1]), 0o644))
	cmd := exec.Command("go", "run", "./"+filepath.Base(dir))
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)
	assert.Equal(t, out[1], string(got))
}

// TestDocSamplesAreExamples checks that every Go sample in README.md and
// docs/ is taken from code that go test compiles and runs: its first line
// names the function and file it comes from ("// Example in
// example_test.go"), and its other lines appear, in order, in that
// function. A sample edited by hand, or an Example changed without its
// sample, fails here.
func TestDocSamplesAreExamples(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)```go\n(.*?)```")
	source := regexp.MustCompile(`^// (\w+) in (\S+\.go)$`)
	samples := 0
	for _, doc := range append([]string{"README.md"}, docs...) {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range block.FindAllStringSubmatch(string(b), -1) {
			samples++
			lines := strings.Split(strings.TrimRight(m[1], "\n"), "\n")
			if lines[0] == "package main" {
				continue // a complete program: TestReadmeProgramRuns builds it
			}
			src := source.FindStringSubmatch(lines[0])
			if !assert.NotNil(t, src, "%s: a sample must start with \"// Func in file.go\", not %q", doc, lines[0]) {
				continue
			}
			body := funcBody(t, src[2], src[1])
			i := 0
			for _, line := range lines[1:] {
				line = strings.TrimSpace(line)
				if line == "" {
					continue
				}
				for i < len(body) && body[i] != line {
					i++
				}
				if !assert.Less(t, i, len(body), "%s: %q is not in %s, in that order", doc, line, src[1]) {
					break
				}
				i++
			}
		}
	}
	assert.Greater(t, samples, 3)
}

// funcBody returns the trimmed lines of function name in file.
func funcBody(t *testing.T, file, name string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	s := string(b)
	start := strings.Index(s, "\nfunc "+name+"(")
	require.GreaterOrEqual(t, start, 0, "no func %s in %s", name, file)
	end := strings.Index(s[start+1:], "\n}\n")
	require.GreaterOrEqual(t, end, 0)
	var out []string
	for _, line := range strings.Split(s[start+1:start+1+end+2], "\n") {
		out = append(out, strings.TrimSpace(line))
	}
	return out
}
