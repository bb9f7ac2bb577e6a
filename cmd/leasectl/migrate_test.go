package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/postgres"
)

// migrate up creates the tables, says which version each part is at, and
// changes nothing the second time.
func TestMigrateUp(t *testing.T) {
	e := newEnv(t) // ran migrate up once
	claims := latestClaimVersion(t)
	out := e.ok("migrate", "up")
	want := []string{
		"PART TABLE VERSION",
		fmt.Sprintf(`locks "%s"."lease_locks" 2`, e.schema),
		fmt.Sprintf(`claims "%s"."lease_claims" %d`, e.schema, claims),
	}
	assert.Equal(t, want, lines(out))
	requireAligned(t, out)

	got := okJSON[[]migrated](e, "migrate", "up")
	assert.Equal(t, []migrated{
		{Part: "locks", Table: fmt.Sprintf(`"%s"."lease_locks"`, e.schema), Version: 2},
		{Part: "claims", Table: fmt.Sprintf(`"%s"."lease_claims"`, e.schema), Version: claims},
	}, got)

	// Other tables, named by flags.
	out = e.ok("migrate", "up", "--lock-table", "my_locks", "--claim-table", "my_items")
	assert.Contains(t, out, fmt.Sprintf(`"%s"."my_locks"`, e.schema))
	assert.Contains(t, out, fmt.Sprintf(`"%s"."my_items"`, e.schema))
	var n int
	require.NoError(t, e.pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{e.schema, "my_items"}.Sanitize()).Scan(&n))
}

// migrate sql prints every migration, numbered, without connecting; the
// SQL, applied by hand, makes a store that the commands work on and that
// migrate up finds up to date.
func TestMigrateSQL(t *testing.T) {
	const nowhere = "postgres://nobody@127.0.0.1:1/none"
	code, out, stderr := runArgs("--dsn", nowhere, "migrate", "sql")
	require.Equal(t, exitOK, code, stderr)
	var heads []string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "-- ") {
			heads = append(heads, l)
		}
	}
	want := []string{"-- locks 1", "-- locks 2"}
	for v := 1; v <= latestClaimVersion(t); v++ {
		want = append(want, fmt.Sprintf("-- claims %d", v))
	}
	assert.Equal(t, want, heads)
	assert.Contains(t, out, `CREATE TABLE "lease_locks"`)

	code, out, _ = runArgs("--dsn", "postgres:", "migrate", "sql", "--part", "claims", "--version", "3")
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "-- claims 3\n"), out)
	assert.NotContains(t, out, "-- claims 2")

	// Applied to a schema of its own, the SQL is the store migrate up makes.
	e := newEnv(t)
	schema := e.schema + "_sql"
	t.Cleanup(func() {
		_, err := e.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	ms := okJSON[[]migration](e, "--schema", schema, "migrate", "sql")
	require.Len(t, ms, len(want))
	for _, m := range ms {
		_, err := e.pool.Exec(ctx, m.SQL)
		require.NoError(t, err, "%s %d", m.Part, m.Version)
	}
	other := &env{t: t, dsn: e.dsn, schema: schema}
	code, out, stderr = other.run("items", "list", "--queue", "q")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, []string{"ID STATE KIND ATTEMPTS PRIORITY ENQUEUED TAGS"}, lines(out))
	got := okJSON[[]migrated](other, "migrate", "up")
	assert.Equal(t, latestClaimVersion(t), got[1].Version)
	claimSQL, err := postgres.ClaimMigrationSQL(postgres.WithClaimSchema(schema))
	require.NoError(t, err)
	assert.Equal(t, claimSQL[len(claimSQL)-1].SQL, ms[len(ms)-1].SQL)

	// Filters that select nothing, or make no sense.
	e.fails(exitNotFound, "migration claims 9: not found", "migrate", "sql", "--part", "claims", "--version", "9")
	e.fails(exitUsage, "--version needs --part", "migrate", "sql", "--version", "1")
	e.fails(exitUsage, `--part is locks or claims, not "x"`, "migrate", "sql", "--part", "x")
	e.fails(exitUsage, "more than PostgreSQL's 63", "migrate", "sql", "--lock-table", strings.Repeat("x", 64))
}

// latestClaimVersion is the claim table's newest schema version, as the
// postgres module has it: the tests follow its migrations, not a copy.
func latestClaimVersion(t *testing.T) int {
	ms, err := postgres.ClaimMigrationSQL()
	require.NoError(t, err)
	return ms[len(ms)-1].Version
}
