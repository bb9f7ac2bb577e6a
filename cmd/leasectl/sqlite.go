package main

import (
	"context"
	"strings"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// sqliteDriver opens an SQLite file, named by a DSN of the form
// sqlite:PATH (sqlite:///abs/path works too). The file keeps its own schema
// version and brings it up to date when opened, so there is no SQL to
// print for other migration tools.
var sqliteDriver = driver{
	open: func(ctx context.Context, dsn string, t tables) (*store, error) {
		path := sqlitePath(dsn)
		if path == "" {
			return nil, usagef("an SQLite DSN names a file: sqlite:PATH")
		}
		if t != (tables{}) {
			return nil, usagef("--schema, --lock-table and --claim-table do not apply to SQLite")
		}
		provider, err := sqlite.NewLockProvider(ctx, path)
		if err != nil {
			return nil, err
		}
		claims, err := sqlite.NewClaimStore(ctx, path)
		if err != nil {
			_ = provider.Close()
			return nil, err
		}
		broker, err := claim.New(claims)
		if err != nil {
			_ = claims.Close()
			_ = provider.Close()
			return nil, err
		}
		migrate := func(context.Context) ([]migrated, error) {
			// Opening the file brought both parts to the current version.
			return []migrated{
				{Part: partLocks, Table: path, Version: sqlite.SchemaVersion},
				{Part: partClaims, Table: path, Version: sqlite.SchemaVersion},
			}, nil
		}
		return &store{broker: broker, locks: provider, migrate: migrate, close: func() {
			_ = broker.Close() // closes the claim store
			_ = provider.Close()
		}}, nil
	},
	migrations: func(tables) ([]migration, error) {
		return nil, usagef("an SQLite file migrates itself when it is opened (migrate up); it has no SQL to print")
	},
}

// sqlitePath is the file a sqlite: DSN names.
func sqlitePath(dsn string) string {
	_, rest, _ := strings.Cut(dsn, ":")
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		return after
	}
	return rest
}
