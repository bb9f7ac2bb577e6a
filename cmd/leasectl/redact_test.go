package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No output or error of leasectl carries a DSN's password, whatever the
// DSN's shape and however it fails: a DSN that does not parse, one that
// names no reachable server, one given in the environment or as an
// argument where none is expected.
func TestNoPasswordInOutput(t *testing.T) {
	const secret = "Sup3r-Secret"
	sqliteDir := filepath.Join(t.TempDir(), "missing")
	cases := []struct {
		name    string
		dsn     string   // given with --dsn, unless env
		env     bool     // given in LEASE_DSN instead
		args    []string // the command; queues when nil
		secrets []string // what must not appear; secret when nil
	}{
		{name: "key=value, spaces around =", dsn: "host=localhost password = " + secret + " port=x"},
		{name: "key=value, space after =", dsn: "host=localhost password= " + secret + " port=x"},
		{name: "key=value, space before =", dsn: "host=localhost password =" + secret + " port=x"},
		{name: "key=value, tab around =", dsn: "host=localhost password\t=\t" + secret + " port=x"},
		{name: "key=value, plain", dsn: "host=localhost password=" + secret + " port=x"},
		{name: "key=value, first", dsn: "password=" + secret + " host=localhost port=x"},
		{name: "key=value, last", dsn: "host=localhost port=x password=" + secret},
		{name: "key=value, quoted with a space", dsn: "host=localhost password = 'Sup3r Secret' port=x",
			secrets: []string{"Sup3r Secret", "Sup3r", "Secret"}},
		{name: "key=value, quoted with an escaped quote", dsn: `host=localhost password='Sup3r\'Secret' port=x`,
			secrets: []string{`Sup3r\'Secret`, "Sup3r'Secret"}},
		{name: "key=value, unterminated quote", dsn: "host=localhost password='" + secret},
		{name: "key=value, escaped space", dsn: `host=localhost password=Sup3r\ Secret port=x`,
			secrets: []string{`Sup3r\ Secret`, "Secret"}},
		{name: "key=value, sslpassword", dsn: "host=localhost sslpassword = " + secret + " port=x"},
		{name: "key=value, unreachable", dsn: "host=127.0.0.1 port=1 user=nobody password = " + secret + " connect_timeout=5"},
		{name: "URL", dsn: "postgres://user:" + secret + "@localhost:x/db"},
		{name: "URL, postgresql", dsn: "postgresql://user:" + secret + "@localhost:x/db"},
		{name: "URL, escaped", dsn: "postgres://user:Sup3r%2FSecret@localhost:x/db",
			secrets: []string{"Sup3r%2FSecret", "Sup3r/Secret"}},
		{name: "URL, raw @", dsn: "postgres://user:Sup3r@Secret@localhost:x/db",
			secrets: []string{"Sup3r@Secret", "Sup3r"}},
		{name: "URL, query", dsn: "postgres://localhost:x/db?user=u&password=" + secret + "&sslmode=disable"},
		{name: "URL, query first", dsn: "postgres://localhost:x/db?password=" + secret},
		{name: "URL, both", dsn: "postgres://u:" + secret + "@localhost:x/db?sslpassword=Other-Secret",
			secrets: []string{secret, "Other-Secret"}},
		{name: "URL, unreachable", dsn: "postgres://nobody:" + secret + "@127.0.0.1:1/none?connect_timeout=5"},
		{name: "URL, unknown kind", dsn: "mysql://user:" + secret + "@localhost/db"},
		{name: "URL, from the environment", dsn: "postgres://user:" + secret + "@localhost:x/db", env: true},
		{name: "key=value, from the environment", dsn: "host=localhost password = " + secret + " port=x", env: true},
		{name: "sqlite", dsn: "sqlite:" + filepath.Join(sqliteDir, "q.db") + "?password=" + secret},
		{name: "URL as an argument", args: []string{"queues", "postgres://u:" + secret + "@localhost/db"}},
		{name: "key=value as an argument", args: []string{"queue", "pause", "password = " + secret}},
		{name: "key=value as a flag's bad value", args: []string{"locks", "--limit", "password = " + secret}},
		{name: "URL in one argument", args: []string{"--dsn=postgres://u:" + secret + "@localhost:x/db", "queues"}},
		{name: "help", dsn: "postgres://user:" + secret + "@localhost/db", env: true, args: []string{"--help"}},
		{name: "subcommand help", dsn: "host=h password = " + secret, env: true, args: []string{"items", "list", "--help"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args == nil {
				args = []string{"queues"}
			}
			t.Setenv(dsnEnv, "")
			switch {
			case c.env:
				t.Setenv(dsnEnv, c.dsn)
			case c.dsn != "":
				args = append([]string{"--dsn", c.dsn}, args...)
			}
			secrets := c.secrets
			if secrets == nil {
				secrets = []string{secret}
			}
			for _, json := range []bool{false, true} {
				a := args
				if json {
					a = append([]string{"--json"}, args...)
				}
				_, out, stderr := runArgs(a...)
				for _, s := range secrets {
					require.NotContains(t, out, s)
					require.NotContains(t, stderr, s)
				}
			}
		})
	}
}

// redact takes a password out of every shape of DSN, and leaves the rest
// of the message as it was.
func TestRedact(t *testing.T) {
	cases := map[string]string{
		"cannot parse `host=h password = pw1 port=x`: invalid port": "cannot parse `host=h password = xxxxx port=x`: invalid port",
		"cannot parse `host=h password='p w' port=x`: invalid port": "cannot parse `host=h password=xxxxx port=x`: invalid port",
		"cannot parse `postgres://u:pw1@h:x/db`: invalid port":      "cannot parse `postgres://u:xxxxx@h:x/db`: invalid port",
		`unknown command "postgres://u:p@w@h/db"`:                   `unknown command "postgres://u:xxxxx@h/db"`,
		"open postgres://h/db?user=u&password=pw1&x=1":              "open postgres://h/db?user=u&password=xxxxx&x=1",
		"relation \"lease_locks\" does not exist":                   "relation \"lease_locks\" does not exist",
		"postgres://user@host/db and host=h dbname=d":               "postgres://user@host/db and host=h dbname=d",
		"PASSWORD=pw1 and Password = pw1":                           "PASSWORD=xxxxx and Password = xxxxx",
	}
	for in, want := range cases {
		assert.Equal(t, want, redact(in), in)
	}
	// The DSN's own secret goes wherever it appears, if it is not too
	// short to tell from other words.
	assert.Equal(t, "the server said xxxxx", redact("the server said Long-Secret", "postgres://u:Long-Secret@h/db"))
	assert.Equal(t, "a b c", redact("a b c", "host=h password=b"))
}
