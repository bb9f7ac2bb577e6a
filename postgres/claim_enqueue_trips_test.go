package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// take returns the statements sent since the last take, lowercased, each
// connection's in order, and forgets them.
func (l *sqlLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, sqls := range l.byConn {
		for _, s := range sqls {
			out = append(out, strings.ToLower(s))
		}
	}
	clear(l.byConn)
	return out
}

// TestClaimStoreEnqueueWithoutKeysIsOneStatement checks that an Enqueue of
// items without keys is one statement, its own transaction (one round
// trip), and that one with a key still runs in a transaction, which its
// second statement (reading the item holding the key) needs.
func TestClaimStoreEnqueueWithoutKeysIsOneStatement(t *testing.T) {
	log := &sqlLog{byConn: map[*pgx.Conn][]string{}}
	pool := newPool(t, "lease-claims-test", func(c *pgxpoolConfig) { c.ConnConfig.Tracer = log })
	s := claimStoreOn(t, pool, WithClaimTable(uniqueTable()))
	log.take()

	its := enqueue(t, s, item("q", "a"), item("q", "b"))
	require.Len(t, its, 2)
	sent := log.take()
	require.Len(t, sent, 1, "one statement: %q", sent)
	assert.True(t, strings.HasPrefix(sent[0], "with seq as"), "the enqueue statement, got %q", sent[0])

	keyed := item("q", "c")
	keyed.Key = "k"
	first := enqueue(t, s, keyed)
	again := enqueue(t, s, keyed)
	assert.True(t, again[0].Duplicate)
	assert.Equal(t, first[0].ID, again[0].ID)
	sent = log.take()
	assert.Contains(t, sent, "begin", "keyed items go in a transaction")
	assert.Contains(t, sent, "commit")

	got := claimN(t, s, "q", "w", 3)
	assert.Len(t, got, 3)
	assert.Equal(t, claim.Counts{Claimed: 3}, counts(t, s, "q"))
}
