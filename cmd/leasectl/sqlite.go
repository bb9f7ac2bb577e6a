package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

// sqliteDriver opens an SQLite file, named by a DSN of the form
// sqlite:PATH (sqlite:///abs/path works too). The file keeps its own schema
// version and brings it up to date when opened, so there is no SQL to
// print for other migration tools.
var sqliteDriver = driver{
	open: func(ctx context.Context, dsn string, t tables, u use) (*store, error) {
		path := sqlitePath(dsn)
		if path == "" {
			return nil, usagef("an SQLite DSN names a file: sqlite:PATH")
		}
		if t != (tables{}) {
			return nil, usagef("--schema, --lock-table and --claim-table do not apply to SQLite")
		}
		// Opening a file creates it: only migrate up may, lest a
		// mistyped path show an empty store.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !u.migrate {
			return nil, notSetUpError{what: "the SQLite file " + path + " does not exist"}
		}
		s := &store{close: func() {}}
		var provider *sqlite.LockProvider
		if u.locks {
			var err error
			if provider, err = sqlite.NewLockProvider(ctx, path); err != nil {
				return nil, err
			}
			s.locks, s.close = provider, func() { _ = provider.Close() }
		}
		if u.claims {
			claims, err := sqlite.NewClaimStore(ctx, path)
			if err != nil {
				s.close()
				return nil, err
			}
			broker, err := claim.New(claims)
			if err != nil {
				_ = claims.Close()
				s.close()
				return nil, err
			}
			closeLocks := s.close
			s.broker, s.close = broker, func() {
				_ = broker.Close() // closes the claim store
				closeLocks()
			}
		}
		if u.migrate {
			s.migrate = func(context.Context) ([]migrated, error) {
				// Opening the file brought both parts to the current version.
				return []migrated{
					{Part: partLocks, Table: path, Version: sqlite.SchemaVersion},
					{Part: partClaims, Table: path, Version: sqlite.SchemaVersion},
				}, nil
			}
		}
		return s, nil
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
