package main

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// postgresDriver opens a PostgreSQL database: the lock provider and the
// claim store of package postgres, on one pool.
var postgresDriver = driver{open: openPostgres, migrations: postgresMigrations}

// postgresOptions returns the options of the provider and the store that
// t names.
func postgresOptions(t tables) ([]postgres.LockOption, []postgres.ClaimOption) {
	var lockOpts []postgres.LockOption
	var claimOpts []postgres.ClaimOption
	if t.schema != "" {
		lockOpts = append(lockOpts, postgres.WithLockSchema(t.schema))
		claimOpts = append(claimOpts, postgres.WithClaimSchema(t.schema))
	}
	if t.locks != "" {
		lockOpts = append(lockOpts, postgres.WithLockTable(t.locks))
	}
	if t.claims != "" {
		claimOpts = append(claimOpts, postgres.WithClaimTable(t.claims))
	}
	return lockOpts, claimOpts
}

func openPostgres(ctx context.Context, dsn string, t tables) (*store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, usagef("the DSN does not parse: %v", err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "leasectl"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	lockOpts, claimOpts := postgresOptions(t)
	provider, err := postgres.NewLockProvider(pool, lockOpts...)
	if err != nil {
		pool.Close()
		return nil, usageError{err}
	}
	claims, err := postgres.NewClaimStore(pool, claimOpts...)
	if err != nil {
		pool.Close()
		return nil, usageError{err}
	}
	broker, err := claim.New(claims)
	if err != nil {
		pool.Close()
		return nil, err
	}
	migrate := func(ctx context.Context) ([]migrated, error) {
		if err := provider.Migrate(ctx); err != nil {
			return nil, err
		}
		if err := claims.Migrate(ctx); err != nil {
			return nil, err
		}
		lockSQL, claimSQL, err := postgresSQL(t)
		if err != nil {
			return nil, err
		}
		return []migrated{
			{Part: partLocks, Table: provider.Table(), Version: len(lockSQL)},
			{Part: partClaims, Table: claims.Table(), Version: len(claimSQL)},
		}, nil
	}
	return &store{
		broker:  broker,
		locks:   provider,
		migrate: migrate,
		close: func() {
			_ = broker.Close()
			pool.Close()
		},
	}, nil
}

// The parts of a store, as migrate and migrate sql name them.
const (
	partLocks  = "locks"
	partClaims = "claims"
)

// postgresSQL returns the migrations of the provider and of the store.
func postgresSQL(t tables) (lockSQL, claimSQL []postgres.Migration, err error) {
	lockOpts, claimOpts := postgresOptions(t)
	lockSQL, err = postgres.LockMigrationSQL(lockOpts...)
	if err != nil {
		return nil, nil, err
	}
	claimSQL, err = postgres.ClaimMigrationSQL(claimOpts...)
	return lockSQL, claimSQL, err
}

func postgresMigrations(t tables) ([]migration, error) {
	lockSQL, claimSQL, err := postgresSQL(t)
	if err != nil {
		var u usageError
		if !errors.As(err, &u) {
			err = usageError{err}
		}
		return nil, err
	}
	var out []migration
	for _, m := range lockSQL {
		out = append(out, migration{Part: partLocks, Version: m.Version, SQL: m.SQL})
	}
	for _, m := range claimSQL {
		out = append(out, migration{Part: partClaims, Version: m.Version, SQL: m.SQL})
	}
	return out, nil
}
