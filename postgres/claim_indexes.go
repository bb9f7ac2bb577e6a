package postgres

import (
	"fmt"
	"strings"
)

// claimIndexStatements is version 5 of a claim table's schema: waiting
// items and claims get an index each, in place of the one that held both,
// and the table is vacuumed sooner than the server's defaults would.
//
// Every claim leaves dead index entries behind until vacuum removes them:
// the waiting version of the item it took and, once settled, the claimed
// version. In the shared index both sat in front of any item enqueued
// later, and a claim right after a burn-down walked all of them. Apart,
// the claim's search for waiting items walks only waiting versions, and
// its search for expired claims stops at the first lease still running.
//
// No fillfactor is set: every update of a claim changes its state or its
// due time, both in an index or an index's predicate, so none could be a
// heap-only (HOT) update, and free room on the pages would buy nothing.
func claimIndexStatements(table string) []string {
	return []string{
		// Version 1's claim index, named by PostgreSQL, found by what it
		// covers.
		dropIndexesEnding(table, `(queue, priority, due, id) WHERE (state = ANY (ARRAY[1, 3]))`),
		// The claim order, over waiting items only.
		fmt.Sprintf(`CREATE INDEX ON %s (queue, priority, due, id) WHERE state = 1`, table),
		// Claims by the expiry of their lease: the expired ones are
		// claimable again.
		fmt.Sprintf(`CREATE INDEX ON %s (queue, due) WHERE state = 3`, table),
		// A queue turns its rows over fast: vacuum after 1% of them (and
		// a thousand) changed or were added rather than the default 20%,
		// so that dead entries do not pile up in front of the claims of a
		// large table.
		fmt.Sprintf(`ALTER TABLE %s SET (
  autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_insert_threshold = 1000)`, table),
	}
}

// claimHistoryStatements is version 6 of a claim table's schema: the
// rows no claim takes (dead, completed and cancelled) get one index by
// queue, state and ID, in place of version 1's index of dead rows by queue
// and ID, which it covers.
//
// With a retention a table holds a day of finished rows, millions of them,
// beside a few thousand live ones. Without this index nothing found the
// rows of one queue but a scan of the whole table: Counts and Queues read
// every row, and grew with the history. With it, every inspection
// statement reads index entries of the states it counts or lists: the
// live states through the claim indexes (in proportion to the live items),
// the kept states through this one (a range per queue and state, read
// without visiting the rows once vacuum has marked their pages visible to
// all), and Queues finds the names of the queues by skipping from one to
// the next in each index rather than reading the rows between.
func claimHistoryStatements(table string) []string {
	return []string{
		// Version 1's index of dead rows, named by PostgreSQL, found by
		// what it covers.
		dropIndexesEnding(table, `(queue, id) WHERE (state = 4)`),
		fmt.Sprintf(`CREATE INDEX ON %s (queue, state, id) WHERE state IN (4, 5, 6)`, table),
		// Every vacuum cleans the indexes. PostgreSQL skips that pass
		// when fewer than 2% of the table's pages hold dead rows, which
		// beside a day of history is nearly every vacuum: the claim
		// index then keeps an entry for every item claimed since the
		// last full pass, at its head, where each Claim walks them. The
		// pass reads every index, a page per hundred rows or so of the
		// table, once per 1% of the table changed (version 5's
		// thresholds): about a page per row changed, in the background.
		fmt.Sprintf(`ALTER TABLE %s SET (vacuum_index_cleanup = on)`, table),
	}
}

// dropIndexesEnding is a DO block that drops the indexes of table whose
// definition (pg_get_indexdef) ends with def: an index PostgreSQL named,
// found by what it covers. def is a LIKE pattern without quotes.
func dropIndexesEnding(table, def string) string {
	return doBlock(table, fmt.Sprintf(`DECLARE i text;
BEGIN
  FOR i IN SELECT indexrelid::regclass::text FROM pg_index
    WHERE indrelid = %[1]s::regclass
      AND pg_get_indexdef(indexrelid) LIKE '%%%[2]s'
  LOOP
    EXECUTE 'DROP INDEX ' || i;
  END LOOP;
END`, quoteLiteral(table), def))
}

// doBlock is an anonymous code block of body, dollar-quoted with a tag the
// table's name does not contain.
func doBlock(table, body string) string {
	tag := "$migrate$"
	for strings.Contains(table, tag) {
		tag = "$" + strings.Trim(tag, "$") + "_$"
	}
	return fmt.Sprintf("DO %[1]s\n%[2]s\n%[1]s", tag, body)
}
