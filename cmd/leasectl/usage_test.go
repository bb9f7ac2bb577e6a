package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wrong command line exits 2 with a message, and help exits 0.
func TestUsage(t *testing.T) {
	dsn := os.Getenv(testDSNEnv)
	cases := []struct {
		args []string
		msg  string
	}{
		{nil, "leasectl: a command is needed: one of items, leaders, locks, migrate, queue, queues\n"},
		{[]string{"bogus"}, `unknown command "bogus" for "leasectl"`},
		{[]string{"items"}, "leasectl: items needs a command: one of cancel, delete, list, retry, show\n"},
		{[]string{"items", "bogus"}, `unknown command "bogus" for "leasectl items"`},
		{[]string{"migrate"}, "leasectl: migrate needs a command: one of sql, up\n"},
		{[]string{"queues", "extra"}, `unknown command "extra" for "leasectl queues"`},
		{[]string{"queues", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"locks", "--limit", "many"}, `invalid argument "many" for "--limit"`},
		{[]string{"--dsn", "mysql://x/y", "queues"}, "unknown kind of store in the DSN: it starts with none of postgres:, postgresql:"},
		{[]string{"--dsn", "postgres://x:notaport/y", "queues"}, "the DSN does not parse"},
	}
	for _, c := range cases {
		code, out, stderr := runArgs(append([]string{"--dsn", dsn}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%q: %s", c.args, stderr)
		assert.Empty(t, out, "%q", c.args)
		assert.Contains(t, stderr, c.msg, "%q", c.args)
		assert.True(t, strings.HasSuffix(stderr, "Run 'leasectl --help' for usage.\n"), "%q: %s", c.args, stderr)
	}

	code, out, stderr := runArgs("--help")
	require.Equal(t, exitOK, code, stderr)
	for _, want := range []string{"Exit status: 0 success, 1 error, 2 usage error, 3 not found.", "migrate", "items", "queues", "--json", "--dsn"} {
		assert.Contains(t, out, want)
	}
	t.Setenv(dsnEnv, "postgres://user:secret@host/db")
	code, out, _ = runArgs("items", "list", "--help")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "--tag string")
	assert.NotContains(t, out, "secret", "the help shows no password")
}

// The DSN comes from --dsn, else from LEASE_DSN; without either it is a
// usage error, and a store that cannot be reached is an error.
func TestDSN(t *testing.T) {
	e := newEnv(t)
	e.enqueue("from-env", "p")
	t.Setenv(dsnEnv, e.dsn)
	code, out, stderr := runArgs("--schema", e.schema, "queues")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "from-env")

	t.Setenv(dsnEnv, "")
	code, _, stderr = runArgs("queues")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no store: give --dsn or set LEASE_DSN")

	t.Setenv(dsnEnv, "postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
	code, out, stderr = runArgs("queues")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "leasectl: open the store:")
	assert.NotContains(t, stderr, "--help")

	// A key=value DSN is PostgreSQL's.
	t.Setenv(dsnEnv, "")
	code, _, stderr = runArgs("--dsn", "host=127.0.0.1 port=1 user=nobody connect_timeout=5", "queues")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "open the store:")
}
