package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/mod/modfile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func rel(t *testing.T, dir, version, gomod string) release {
	t.Helper()
	f, err := modfile.Parse(dir+"/go.mod", []byte(gomod), nil)
	require.NoError(t, err)
	return release{dir: dir, version: version, gomod: []byte(gomod), file: f}
}

const (
	root   = "module example.com/m\n\ngo 1.25.0\n"
	nested = "module example.com/m/sub\n\ngo 1.25.0\n\nrequire example.com/m v0.1.0\n"
)

func TestCheckAcceptsAPublishableSet(t *testing.T) {
	assert.NoError(t, check([]release{rel(t, ".", "v0.1.0", root), rel(t, "sub", "v0.1.0", nested)}))
}

func TestCheckRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rels    func(*testing.T) []release
		message string
	}{
		{"a replace directive", func(t *testing.T) []release {
			return []release{rel(t, ".", "v0.1.0", root), rel(t, "sub", "v0.1.0", nested+"replace example.com/m => ../\n")}
		}, "must not replace"},
		{"a requirement on another version", func(t *testing.T) []release {
			return []release{rel(t, ".", "v0.2.0", root), rel(t, "sub", "v0.2.0", nested)}
		}, "requires example.com/m v0.1.0, but v0.2.0 is being published"},
		{"a pseudo-version", func(t *testing.T) []release {
			return []release{rel(t, ".", "v0.0.0-00010101000000-000000000000", root)}
		}, "not a release version"},
		{"v0.0.0", func(t *testing.T) []release { return []release{rel(t, ".", "v0.0.0", root)} }, "not a release version"},
		{"a major version the path lacks", func(t *testing.T) []release { return []release{rel(t, ".", "v2.0.0", root)} }, "v2"},
		{"a module path that is not its directory", func(t *testing.T) []release {
			return []release{rel(t, "other", "v0.1.0", nested)}
		}, "does not end in /other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, check(tc.rels(t)), tc.message)
		})
	}
}
