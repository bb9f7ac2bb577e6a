package lease_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules for Go in the docs (README.md and docs/*.md), which the tests
// of this file and of readme_test.go enforce:
//
//   - A ```go block is either a complete file (it starts with a package
//     clause), which TestDocsGoBlocksCompile type-checks with go vet in a
//     directory of this module, or a quote of a function of a test file,
//     whose first line names it ("// ExampleFoo in sqlite/example_test.go"):
//     TestDocSamplesAreExamples checks that its lines appear in that
//     function in order, and TestDocsGoBlocksCompile vets the package that
//     holds the function, so a sample cannot drift from code that compiles.
//   - A fragment that is neither (a signature, a sketch) is fenced
//     ```go fragment; nothing checks it, so keep such blocks rare.
//
// Quote Example functions: go test runs those with an Output comment and
// checks what they print, and compiles the others (an Example that needs
// a server, as the PostgreSQL ones do, has no Output comment).

// docFiles returns README.md and every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	return append([]string{"README.md"}, docs...)
}

var (
	goBlock    = regexp.MustCompile("(?s)```go\n(.*?)```")
	quoteFirst = regexp.MustCompile(`^// (\w+) in (\S+\.go)$`)
)

// TestDocsGoBlocksCompile type-checks every Go block of the docs with go
// vet: a complete file as a package of its own, a quoted function through
// the package that holds it (a block that is neither fails in
// TestDocSamplesAreExamples). Packages of nested modules are vetted from
// their module's directory, through the workspace.
func TestDocsGoBlocksCompile(t *testing.T) {
	byModule := map[string]map[string][]string{} // module dir -> package dir -> docs quoting it
	var programs []string
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range goBlock.FindAllStringSubmatch(string(b), -1) {
			first, _, _ := strings.Cut(m[1], "\n")
			if strings.HasPrefix(first, "package ") {
				programs = append(programs, m[1])
				continue
			}
			src := quoteFirst.FindStringSubmatch(first)
			if src == nil {
				continue // reported by TestDocSamplesAreExamples
			}
			_, err := os.Stat(src[2])
			if !assert.NoError(t, err, "%s quotes %s", doc, src[2]) {
				continue
			}
			mod := moduleDir(t, filepath.Dir(src[2]))
			if byModule[mod] == nil {
				byModule[mod] = map[string][]string{}
			}
			rel, err := filepath.Rel(mod, filepath.Dir(src[2]))
			require.NoError(t, err)
			pkg := "./" + filepath.ToSlash(rel)
			byModule[mod][pkg] = append(byModule[mod][pkg], doc)
		}
	}
	require.NotEmpty(t, byModule, "the docs quote no example")

	var dirs []string
	for i, p := range programs {
		dir, err := os.MkdirTemp(".", "_docblock-")
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, os.RemoveAll(dir)) })
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(p), 0o644), "program %d", i)
		dirs = append(dirs, "./"+filepath.Base(dir))
	}
	if len(dirs) > 0 {
		vet(t, ".", dirs, "a complete program in the docs")
	}
	mods := make([]string, 0, len(byModule))
	for mod := range byModule {
		mods = append(mods, mod)
	}
	sort.Strings(mods)
	for _, mod := range mods {
		var pkgs, quoted []string
		for pkg, docs := range byModule[mod] {
			pkgs = append(pkgs, pkg)
			quoted = append(quoted, pkg+" (quoted in "+strings.Join(docs, ", ")+")")
		}
		sort.Strings(pkgs)
		sort.Strings(quoted)
		vet(t, mod, pkgs, strings.Join(quoted, "; "))
	}
}

// vet runs go vet on pkgs from dir, failing the test with its output.
func vet(t *testing.T, dir string, pkgs []string, what string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "go vet in %s: %s\n%s", dir, what, out)
}

// moduleDir returns the directory of the module holding dir: the nearest
// one, dir or above, with a go.mod.
func moduleDir(t *testing.T, dir string) string {
	t.Helper()
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		require.NotEqual(t, ".", d, "no go.mod above %s", dir)
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// TestDocsLinksResolve checks every relative link of the docs: the file
// it names exists, and the anchor, if any, is a heading of that file, so
// that renaming a page or a section cannot leave a dead link.
func TestDocsLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		a := map[string]bool{}
		seen := map[string]int{}
		for _, h := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			slug := slugOf(h[1])
			if n := seen[slug]; n > 0 {
				a[slug+"-"+strconv.Itoa(n)] = true
			} else {
				a[slug] = true
			}
			seen[slug]++
		}
		anchors[file] = a
		return a
	}
	links := 0
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		text := inlineCode.ReplaceAllString(fence.ReplaceAllString(string(b), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.Join(filepath.Dir(doc), path)
				if _, err := os.Stat(file); !assert.NoError(t, err, "%s links to %s", doc, target) {
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(file, ".md") {
				assert.True(t, anchorsOf(file)[anchor], "%s links to %s: %s has no heading with anchor #%s", doc, target, file, anchor)
			}
		}
	}
	assert.Greater(t, links, 20)
}

// slugOf returns the anchor GitHub gives a heading: lower case, spaces to
// hyphens, and every character but letters, digits, hyphens and
// underscores dropped.
func slugOf(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsSayWhoTheyAreFor checks that every page of docs/ opens, under
// its title, with one line saying who it is for.
func TestDocsSayWhoTheyAreFor(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		lines := strings.SplitN(string(b), "\n", 4)
		if assert.Len(t, lines, 4, doc) {
			assert.True(t, strings.HasPrefix(lines[0], "# ") && lines[1] == "" && strings.HasPrefix(lines[2], "For ") && strings.HasPrefix(lines[3], "\n"),
				"%s must open with its title, a blank line, then one line \"For ...\" saying who it is for", doc)
		}
	}
}

// TestReadmeFiguresAreMeasured checks that every figure the README's
// comparison with its peers quotes (from "**Why it" to the install block)
// appears in docs/benchmarks.md or docs/replication.md, where the run that
// measured it is described: the README cannot quote a number nobody
// measured, or keep one the benchmarks page no longer shows.
func TestReadmeFiguresAreMeasured(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	start := strings.Index(readme, "**Why it")
	require.GreaterOrEqual(t, start, 0, "README.md has no comparison with its peers")
	end := strings.Index(readme[start:], "```")
	require.Greater(t, end, 0)
	var measured string
	for _, doc := range []string{"docs/benchmarks.md", "docs/replication.md"} {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		measured += string(b)
	}
	number := regexp.MustCompile(`\b\d[\d,]*(\.\d+)?\b`)
	figures := 0
	for _, n := range number.FindAllString(readme[start:start+end], -1) {
		if len(n) < 3 { // small counts ("2-core", "100 workers") are not figures
			continue
		}
		figures++
		// With or without thousands separators, as a whole number.
		plain := strings.ReplaceAll(n, ",", "")
		whole := regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(plain) + `($|[^\d])`)
		assert.True(t, whole.MatchString(strings.ReplaceAll(measured, ",", "")), "README.md quotes %s, which neither docs/benchmarks.md nor docs/replication.md shows", n)
	}
	assert.Greater(t, figures, 5)
}

// TestBenchmarksPageKeepsItsNotes checks that docs/benchmarks.md holds
// bench/notes.md whole (its intro before the results, the rest after
// them): the page is regenerated from those notes, so a result written
// only into the page would be lost at the next run of the generator.
func TestBenchmarksPageKeepsItsNotes(t *testing.T) {
	page, err := os.ReadFile("docs/benchmarks.md")
	require.NoError(t, err)
	notes, err := os.ReadFile("bench/notes.md")
	require.NoError(t, err)
	intro, rest, found := strings.Cut(string(notes), "<!-- end of intro -->")
	require.True(t, found, "bench/notes.md has no end-of-intro line")
	assert.Contains(t, string(page), strings.TrimSpace(intro), "docs/benchmarks.md lacks the intro of bench/notes.md")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(string(page)), strings.TrimSpace(rest)),
		"docs/benchmarks.md does not end with the notes after the intro in bench/notes.md: copy the page's hand-written sections back into the notes")
}
