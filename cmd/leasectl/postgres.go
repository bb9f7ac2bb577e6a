package main

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
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

func openPostgres(ctx context.Context, dsn string, t tables, u use) (*store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, dsnError(err)
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
	s := &store{close: pool.Close, missing: postgresMissing}
	lockOpts, claimOpts := postgresOptions(t)
	var provider *postgres.LockProvider
	if u.locks {
		if provider, err = postgres.NewLockProvider(pool, lockOpts...); err != nil {
			pool.Close()
			return nil, usageError{err}
		}
		s.locks = provider
	}
	var claims *postgres.ClaimStore
	if u.claims {
		if claims, err = postgres.NewClaimStore(pool, claimOpts...); err != nil {
			pool.Close()
			return nil, usageError{err}
		}
		if s.broker, err = claim.New(claims); err != nil {
			pool.Close()
			return nil, err
		}
		s.close = func() {
			_ = s.broker.Close()
			pool.Close()
		}
	}
	if u.migrate {
		s.migrate = func(ctx context.Context) ([]migrated, error) {
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
	}
	return s, nil
}

// postgresMissing reports an error of PostgreSQL's for a table, or a
// schema, that does not exist: what a store never migrated answers.
func postgresMissing(err error) (string, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "", false
	}
	switch pe.Code {
	case "42P01", // undefined_table
		"3F000": // invalid_schema_name
		return pe.Message, true
	}
	return "", false
}

// dsnError is the usage error of a DSN that does not parse. pgx's error
// shows the DSN with the passwords it recognizes masked, which a malformed
// DSN can defeat (password = secret, an escaped space): this one shows
// the DSN as redact leaves it, and pgx's reason.
func dsnError(err error) error {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return usagef("the DSN does not parse: %v", err)
	}
	// What pgx's message starts with: "cannot parse `DSN`: ".
	start := (&pgconn.ParseConfigError{ConnString: pe.ConnString}).Error()
	why, ok := strings.CutPrefix(pe.Error(), start)
	if !ok {
		why = "it is neither a URL nor key=value pairs"
	}
	return usagef("the DSN `%s` does not parse: %s", redact(pe.ConnString), why)
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
