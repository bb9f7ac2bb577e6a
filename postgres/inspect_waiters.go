package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// WaitCounts returns how many callers of [LockProvider.AcquireWait], in every
// process, are queued for each of the locks names, from one SELECT of the
// waiters' table: a waiter counts while its ticket is refreshed, so one
// whose process died stops counting within the tickets' time to live (5
// seconds). A name nobody waits for is absent from the map. The answer is
// a snapshot, meant for operators: a waiter may be served or give up as
// soon as it is given. A nil ctx or a name the provider would refuse to
// Acquire is bad input.
func (p *LockProvider) WaitCounts(ctx context.Context, names []string) (map[string]int, error) {
	const op = "waiting"
	if ctx == nil {
		return nil, invalid(op, "ctx", "must not be nil")
	}
	for i, name := range names {
		if err := lockChecks.Name(op, fmt.Sprintf("names[%d]", i), name); err != nil {
			return nil, err
		}
	}
	out := map[string]int{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := p.pool.Query(ctx, fmt.Sprintf(`SELECT name, count(*) FROM %s
WHERE name = ANY($1::text[]) AND seen_at > clock_timestamp() - $2::bigint * interval '1 microsecond'
GROUP BY name`, p.waiters), names, micros(p.ticketTTL))
	if err != nil {
		return nil, fmt.Errorf("postgres: waiting: %w", err)
	}
	var name string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error {
		out[name] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: waiting: %w", err)
	}
	return out, nil
}
