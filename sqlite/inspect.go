package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/leasehold/lease/lock"
)

// Holder returns who holds the lock name, read in one SELECT: the lock is
// held when its lease has not ended on the provider's clock. It makes
// LockProvider a [lockprovider.Inspector]. The Holding's Value is always nil: the
// provider stores no values.
func (p *LockProvider) Holder(ctx context.Context, name string) (lock.Holding, bool, error) {
	const op = "holder"
	if err := lockChecks.Holder(ctx, name); err != nil {
		return lock.Holding{}, false, err
	}
	if err := p.open(op); err != nil {
		return lock.Holding{}, false, err
	}
	h := lock.Holding{Name: name}
	var token, expires int64
	err := p.d.reading(ctx, func() error {
		return p.d.read.QueryRowContext(ctx, sqlHolder, sql.Named("name", name), sql.Named("now", p.d.now())).
			Scan(&h.ExecutionID, &token, &expires)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return lock.Holding{}, false, nil
	}
	if err != nil {
		return lock.Holding{}, false, p.fail(op, err)
	}
	h.Token, h.ExpiresAt = uint64(token), at(expires)
	return h, true, nil
}

// Held returns the locks held whose names start with prefix (all of them
// for ""), in byte order of their names, at most limit of them when
// limit > 0, from one SELECT: it makes LockProvider a [lockprovider.Inspector]. It
// reads every lock row, so it is meant for operators, not a hot path.
func (p *LockProvider) Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error) {
	const op = "held"
	if err := lockChecks.Held(ctx, prefix, limit); err != nil {
		return nil, err
	}
	if err := p.open(op); err != nil {
		return nil, err
	}
	lim := int64(-1)
	if limit > 0 {
		lim = int64(limit)
	}
	var out []lock.Holding
	err := p.d.reading(ctx, func() error {
		out = nil
		rows, err := p.d.read.QueryContext(ctx, sqlHeld, sql.Named("prefix", prefix), sql.Named("now", p.d.now()),
			sql.Named("limit", lim))
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var h lock.Holding
			var token, expires int64
			if err := rows.Scan(&h.Name, &h.ExecutionID, &token, &expires); err != nil {
				return err
			}
			h.Token, h.ExpiresAt = uint64(token), at(expires)
			out = append(out, h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, p.fail(op, err)
	}
	return out, nil
}
