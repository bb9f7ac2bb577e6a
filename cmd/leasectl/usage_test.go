package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wrong command line exits 2 with a message that names the program
// once, and points at the help of the command it was for; help exits 0
// and names every form of DSN.
func TestUsage(t *testing.T) {
	dsn := os.Getenv(testDSNEnv)
	cases := []struct {
		args []string
		msg  string
		help string // the command whose help the error points at
	}{
		{nil, "leasectl: a command is needed: one of items, leaders, locks, migrate, queue, queues\n", "leasectl"},
		{[]string{"bogus"}, `leasectl: unknown command "bogus": one of items, leaders, locks, migrate, queue, queues` + "\n", "leasectl"},
		{[]string{"items"}, "leasectl: items needs a command: one of cancel, delete, list, retry, show\n", "leasectl items"},
		{[]string{"items", "bogus"}, `leasectl: items has no command "bogus": one of cancel, delete, list, retry, show` + "\n", "leasectl items"},
		{[]string{"migrate"}, "leasectl: migrate needs a command: one of sql, up\n", "leasectl migrate"},
		{[]string{"queue", "stop"}, `leasectl: queue has no command "stop": one of pause, resume` + "\n", "leasectl queue"},
		{[]string{"queue", "pause"}, "leasectl: queue pause takes 1 argument(s): QUEUE; got 0\n", "leasectl queue pause"},
		{[]string{"queues", "extra"}, `leasectl: queues takes no arguments, not "extra"` + "\n", "leasectl queues"},
		{[]string{"items", "list", "--queue", "q", "extra"}, `leasectl: items list takes no arguments, not "extra"` + "\n", "leasectl items list"},
		{[]string{"items", "list"}, `leasectl: required flag(s) "queue" not set` + "\n", "leasectl items list"},
		{[]string{"queues", "--bogus"}, "leasectl: unknown flag: --bogus\n", "leasectl queues"},
		{[]string{"locks", "--limit", "many"}, `leasectl: invalid argument "many" for "--limit" flag: strconv.ParseInt: parsing "many": invalid syntax` + "\n", "leasectl locks"},
		{[]string{"--dsn", "mysql://x/y", "queues"}, "unknown kind of store in the DSN: it starts with none of postgres:, postgresql:, sqlite:\n", "leasectl queues"},
		{[]string{"--dsn", "postgres://x:notaport/y", "queues"}, "leasectl: open the store: the DSN `postgres://x:notaport/y` does not parse: invalid port\n", "leasectl queues"},
	}
	for _, c := range cases {
		code, out, stderr := runArgs(append([]string{"--dsn", dsn}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%q: %s", c.args, stderr)
		assert.Empty(t, out, "%q", c.args)
		assert.Contains(t, stderr, c.msg, "%q", c.args)
		assert.True(t, strings.HasSuffix(stderr, c.msg+"Run '"+c.help+" --help' for usage.\n"), "%q: %s", c.args, stderr)
		assert.Equal(t, 1, strings.Count(stderr, "leasectl:"), "%q: the program is named once: %s", c.args, stderr)
		assert.NotContains(t, stderr, `"leasectl`, "%q", c.args)
	}

	code, out, stderr := runArgs("--help")
	require.Equal(t, exitOK, code, stderr)
	for _, want := range []string{"Exit status: 0 success, 1 error, 2 usage error, 3 not found.", "migrate", "items", "queues", "--json", "--dsn",
		"postgres://user@host:5432/db", "host=HOST dbname=DB user=USER", "sqlite:PATH"} {
		assert.Contains(t, out, want)
	}
	t.Setenv(dsnEnv, "postgres://user:secret@host/db")
	code, out, _ = runArgs("items", "list", "--help")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "--tag string")
	assert.Contains(t, out, "sqlite:PATH", "the --dsn flag names every form")
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
