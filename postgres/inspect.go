package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/lock"
)

// Holder returns who holds the lock name, read in one SELECT of its row: the
// lock is held when its lease has not expired on the database's clock. It
// makes LockProvider a [lockprovider.Inspector]. The Holding's Value is always nil: the
// provider stores no values (it is not a [lockprovider.ValueAcquirer]). A name the
// provider would refuse to Acquire is bad input.
func (p *LockProvider) Holder(ctx context.Context, name string) (lock.Holding, bool, error) {
	if err := lockChecks.Holder(ctx, name); err != nil {
		return lock.Holding{}, false, err
	}
	h := lock.Holding{Name: name}
	var token int64
	err := p.pool.QueryRow(ctx, p.sql.holder, name).Scan(&h.ExecutionID, &token, &h.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return lock.Holding{}, false, nil
	}
	if err != nil {
		return lock.Holding{}, false, fmt.Errorf("postgres: holder %q: %w", name, err)
	}
	h.Token = uint64(token)
	return h, true, nil
}

// Held returns the locks held whose names start with prefix (all of them
// for ""), in byte order of their names, at most limit of them when
// limit > 0, from one SELECT: it makes LockProvider a [lockprovider.Inspector]. The
// prefix is plain text (% and _ are not patterns). The SELECT reads every
// row of the table that is held, so it is meant for operators and
// dashboards, not for a hot path. Values are always nil, as in
// [LockProvider.Holder]. A negative limit, or a prefix that is not valid UTF-8
// or holds a NUL, is bad input.
func (p *LockProvider) Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error) {
	if err := lockChecks.Held(ctx, prefix, limit); err != nil {
		return nil, err
	}
	var lim *int64 // NULL: no limit
	if limit > 0 {
		n := int64(limit)
		lim = &n
	}
	rows, err := p.pool.Query(ctx, p.sql.held, prefix, lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: held %q: %w", prefix, err)
	}
	var (
		out     []lock.Holding
		h       lock.Holding
		token   int64
		expires time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&h.Name, &h.ExecutionID, &token, &expires}, func() error {
		h.Token, h.ExpiresAt = uint64(token), expires
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: held %q: %w", prefix, err)
	}
	return out, nil
}
