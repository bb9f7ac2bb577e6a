// Command postgres-lock runs two workers that contend for a named lock kept
// in PostgreSQL: one wins and writes a report, the other sees contention;
// then the second takes the lock over with a greater fencing token, and the
// first worker's late write with its old token is refused by the resource.
//
// It needs a server. Run it against a throwaway one with
//
//	../../scripts/with-postgres go run .
//
// or set LEASE_POSTGRES_DSN (or pass -dsn) to a database where it may
// create the table postgres_lock_example.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/postgres"
)

// errUnreachable marks a failure to reach the server, for which main prints
// how to start one.
var errUnreachable = errors.New("PostgreSQL is not reachable")

func main() {
	dsn := flag.String("dsn", os.Getenv("LEASE_POSTGRES_DSN"), "PostgreSQL connection string")
	flag.Parse()
	err := run(context.Background(), *dsn, os.Stdout)
	if errors.Is(err, errUnreachable) {
		fmt.Fprintf(os.Stderr, `%v

This example needs a PostgreSQL server. Start a throwaway one (it is
removed afterwards) and run the example against it, from this directory:

	../../scripts/with-postgres go run .

or set LEASE_POSTGRES_DSN, or pass -dsn, to a database where the example
may create the table postgres_lock_example.
`, err)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// report is the resource the lock guards: it takes writes only with a
// current fencing token, as a real store would compare a token column.
type report struct {
	fence lock.Fence
	text  string
}

func (r *report) write(l lock.Lease, text string) error {
	if err := r.fence.Check(l.Name, l.Token); err != nil {
		return err
	}
	r.text = text
	return nil
}

func run(ctx context.Context, dsn string, out io.Writer) error {
	if dsn == "" {
		return fmt.Errorf("%w: LEASE_POSTGRES_DSN is not set", errUnreachable)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return fmt.Errorf("%w: %v", errUnreachable, err)
	}
	defer pool.Close()
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		return fmt.Errorf("%w at %s: %v", errUnreachable, dsn, err)
	}

	provider, err := postgres.NewLockProvider(pool, postgres.WithLockTable("postgres_lock_example"))
	if err != nil {
		return err
	}
	// Safe to run from every process at start-up.
	if err := provider.Migrate(ctx); err != nil {
		return err
	}
	worker := func(id string) (*lock.Manager, error) {
		return lock.NewManager(provider, lock.WithExecutionID(id), lock.WithLeaseDuration(10*time.Second))
	}
	alice, err := worker("alice")
	if err != nil {
		return err
	}
	bob, err := worker("bob")
	if err != nil {
		return err
	}
	var res report

	// Alice wins; while she holds the lock, Bob is refused without error.
	var aliceLease lock.Lease
	_, err = alice.TryLock(ctx, "nightly-report", func(ctx context.Context, l lock.Lease) error {
		aliceLease = l
		fmt.Fprintln(out, "alice holds nightly-report")
		got, err := bob.TryLock(ctx, "nightly-report", func(context.Context, lock.Lease) error { return nil })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "bob acquired it too: %t\n", got)
		return res.write(l, "written by alice")
	})
	if err != nil {
		return err
	}

	// Alice released it when her function returned: now Bob gets it, with
	// a greater token.
	_, err = bob.TryLock(ctx, "nightly-report", func(ctx context.Context, l lock.Lease) error {
		fmt.Fprintf(out, "bob holds nightly-report, token greater than alice's: %t\n", l.Token > aliceLease.Token)
		return res.write(l, "written by bob")
	})
	if err != nil {
		return err
	}

	// A write that arrives late with Alice's old token is refused.
	err = res.write(aliceLease, "late write by alice")
	fmt.Fprintf(out, "alice's late write refused: %t\n", errors.Is(err, lock.ErrStaleToken))
	fmt.Fprintf(out, "report: %s\n", res.text)
	return nil
}
