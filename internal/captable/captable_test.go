package captable_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease/internal/captable"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// contains checks that text holds the lines of table, one after the
// other, each with prefix.
func contains(t *testing.T, path, prefix string, table []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var want strings.Builder
	for _, line := range table {
		want.WriteString(prefix + line + "\n")
	}
	assert.True(t, strings.Contains(string(b), want.String()), "%s must show the table of internal/captable:\n%s", path, want.String())
}

// The package docs and docs/capabilities.md show the one table.
func TestDocsShowTheTable(t *testing.T) {
	contains(t, "../../claim/claimstore/doc.go", "//\t", captable.ClaimText())
	contains(t, "../../lock/lockprovider/doc.go", "//\t", captable.LockText())
	contains(t, "../../docs/capabilities.md", "", captable.ClaimText())
	contains(t, "../../docs/capabilities.md", "", captable.LockText())
}

// A row that disagrees with the type fails the check.
func TestCheckCatchesDrift(t *testing.T) {
	var rec recorder
	captable.CheckLockProvider(&rec, "postgres.LockProvider", nil, []string{"lockprovider.TimeBase"})
	assert.NotEmpty(t, rec.errs, "a nil provider implements none, and the suite exercised one not listed")
}

// recorder is a testing.TB that records errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, f) }

// Neither seam imports its user package (nor the other's): package claim
// imports claim/claimstore and package lock imports lock/lockprovider,
// never the other way round.
func TestSeamsImportNoUserPackage(t *testing.T) {
	forbidden := []string{
		"github.com/leasehold/lease/claim", "github.com/leasehold/lease/lock",
		"github.com/leasehold/lease/lock/election",
	}
	for _, dir := range []string{"../../claim/claimstore", "../../lock/lockprovider"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range parsed.Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				require.NoError(t, err)
				assert.NotContains(t, forbidden, path, "%s imports %s", f, path)
			}
		}
	}
}
