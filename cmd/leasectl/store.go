package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// store is what a DSN opens: the work queue and the locks of one database,
// behind the interfaces every store of the project implements. The
// commands act through them only, so a new kind of store needs a driver,
// not new commands. Only the parts a command uses are opened: the other
// field is nil.
type store struct {
	broker *claim.Broker      // with part claims
	locks  inspectingProvider // with part locks
	// migrate applies the store's migrations and says what each part
	// of the store is now at.
	migrate func(ctx context.Context) ([]migrated, error)
	// close releases the connections; the broker is closed with it.
	close func()
	// missing says what is missing, when err is the store's way of
	// saying that a table the command needs does not exist.
	missing func(err error) (what string, ok bool)
}

// notSetUpError is a store whose part a command uses was never set up:
// a table, or the file, is missing. migrate up sets it up.
type notSetUpError struct {
	part string // partLocks, partClaims, or "" for the whole store
	what string // what is missing, in the store's words
	t    tables // the flags the command was given
}

func (e notSetUpError) Error() string {
	subject := "the store is"
	switch e.part {
	case partLocks:
		subject = "the store's locks are"
	case partClaims:
		subject = "the store's work queues are"
	}
	cmd := "leasectl"
	for _, f := range [][2]string{{"--schema", e.t.schema}, {"--lock-table", e.t.locks}, {"--claim-table", e.t.claims}} {
		if f[1] != "" {
			cmd += " " + f[0] + " " + f[1]
		}
	}
	return fmt.Sprintf("%s not set up: %s; '%s migrate up' creates what is missing", subject, e.what, cmd)
}

// use says what a command does with a store: the parts it opens, and
// whether it sets them up (migrate up), creating what is missing.
type use struct {
	locks, claims bool
	migrate       bool
}

// The uses of the commands.
var (
	useLocks   = use{locks: true}
	useClaims  = use{claims: true}
	useMigrate = use{locks: true, claims: true, migrate: true}
)

// part names the one part u opens, for messages; "" when it opens both.
func (u use) part() string {
	switch {
	case u.locks && u.claims:
		return ""
	case u.locks:
		return partLocks
	}
	return partClaims
}

// inspectingProvider is a lock provider that can say who holds its locks:
// what `locks` reads, and what an election needs to say who leads.
type inspectingProvider interface {
	lock.Provider
	lockprovider.Inspector
	lockprovider.Waiter
}

// migrated is what migrate says of one part of a store.
type migrated struct {
	Part    string `json:"part"`    // "locks" or "claims"
	Table   string `json:"table"`   // as the store's SQL names it
	Version int    `json:"version"` // the version the part is now at
}

// migration is one migration of one part of a store, as SQL text.
type migration struct {
	Part    string `json:"part"`
	Version int    `json:"version"`
	SQL     string `json:"sql"`
}

// tables names where a store keeps its locks and items; empty fields take
// the driver's defaults.
type tables struct {
	schema, locks, claims string
}

// driver opens the stores of one kind of DSN.
type driver struct {
	// open connects to the store dsn names, for u.
	open func(ctx context.Context, dsn string, t tables, u use) (*store, error)
	// migrations returns the store's migrations as SQL without connecting.
	migrations func(t tables) ([]migration, error)
}

// drivers maps a DSN's scheme (the text before its first colon) to its
// driver.
var drivers = map[string]driver{
	"postgres":   postgresDriver,
	"postgresql": postgresDriver,
	"sqlite":     sqliteDriver,
}

// driverFor returns the driver of dsn. PostgreSQL's key=value connection
// strings, which have no scheme, are PostgreSQL's.
func driverFor(dsn string) (driver, error) {
	if dsn == "" {
		return driver{}, usagef("no store: give --dsn or set %s", dsnEnv)
	}
	scheme, _, ok := strings.Cut(dsn, ":")
	if d, found := drivers[strings.ToLower(scheme)]; ok && found {
		return d, nil
	}
	if strings.Contains(dsn, "=") && !strings.Contains(dsn, "://") {
		return postgresDriver, nil
	}
	var known []string
	for s := range drivers {
		known = append(known, s+":")
	}
	slices.Sort(known)
	return driver{}, usagef("unknown kind of store in the DSN: it starts with none of %s", strings.Join(known, ", "))
}

// openStore opens the store dsn names, for u.
func openStore(ctx context.Context, dsn string, t tables, u use) (*store, error) {
	d, err := driverFor(dsn)
	if err != nil {
		return nil, err
	}
	s, err := d.open(ctx, dsn, t, u)
	var notSetUp notSetUpError
	if errors.As(err, &notSetUp) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("open the store: %w", err)
	}
	return s, nil
}
