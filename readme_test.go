package lease_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
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

func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
