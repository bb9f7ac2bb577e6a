package pgcompare

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// OpenOurs opens this repository's PostgreSQL claim store (package
// postgres's ClaimStore behind a claim.Broker, worked by Broker.Work) on
// the fresh database pool points to, with workers workers, as a System.
// It is nil until that store exists; OurSettings then measures nothing.
//
// To plug the store in, set it from an init function in a file of this
// package: queue_ours_claimstore.go holds that adapter, behind the
// claimstore build tag until the store's API is on main. Build with
// -tags claimstore, or drop the tag once it compiles.
//
// It is set once, before Measure runs, and only read after.
var OpenOurs func(ctx context.Context, pool *pgxpool.Pool, workers int) (System, error)

// OurSettings are the ways the claim store is measured, beside
// RiverSettings: 100 workers, like River's defaults and tuned settings,
// and 2,000 like River's own benchmark, on a pool of DefaultPoolSize
// connections. It is empty while OpenOurs is nil.
func OurSettings() []Setting {
	if OpenOurs == nil {
		return nil
	}
	open := func(workers int) func(context.Context, *pgxpool.Pool) (System, error) {
		return func(ctx context.Context, pool *pgxpool.Pool) (System, error) { return OpenOurs(ctx, pool, workers) }
	}
	return []Setting{
		{Name: "lease ClaimStore (100 workers)", PoolSize: DefaultPoolSize, Open: open(100)},
		{Name: "lease ClaimStore (2,000 workers)", PoolSize: DefaultPoolSize, Open: open(2000)},
	}
}
