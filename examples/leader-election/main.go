// Command leader-election runs two candidates, alice and bob, in a leader
// election, kills the one that leads, and shows the other take over.
//
// On PostgreSQL (the default) the candidates are two processes: this
// program starts itself twice as candidates, and kills the leader with
// SIGKILL, as a crash: it releases nothing, so its successor leads once its
// lease has expired, within the lease duration and a renewal interval. It
// then stops the new leader with SIGTERM, which resigns at once. Run it
// against a throwaway server with
//
//	../../scripts/with-postgres go run .
//
// or set LEASE_POSTGRES_DSN (or pass -dsn) to a database where it may
// create the table leader_election_example.
//
// With -memory the candidates are two goroutines of this process on one
// lock.Memory, and the leader is stopped by cancelling its context, which
// releases the lock: the other leads at once. It needs no server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// errUnreachable marks a failure to reach the server, for which main prints
// how to start one.
var errUnreachable = errors.New("PostgreSQL is not reachable")

// electionName is the lock the candidates contend for.
const electionName = "leader-election-example"

// config is what a run is given.
type config struct {
	memory bool          // candidates in this process, on a lock.Memory
	dsn    string        // the PostgreSQL server, without memory
	lease  time.Duration // the leader's lease
}

func main() {
	if name := os.Getenv(candidateEnv); name != "" {
		os.Exit(candidateMain(name))
	}
	var cfg config
	flag.BoolVar(&cfg.memory, "memory", false, "run both candidates in this process, on a lock.Memory")
	flag.StringVar(&cfg.dsn, "dsn", os.Getenv("LEASE_POSTGRES_DSN"), "PostgreSQL connection string")
	flag.DurationVar(&cfg.lease, "lease", 2*time.Second, "the leader's lease duration")
	flag.Parse()
	err := run(context.Background(), cfg, os.Stdout)
	if errors.Is(err, errUnreachable) {
		fmt.Fprintf(os.Stderr, `%v

This example needs a PostgreSQL server, unless run with -memory. Start a
throwaway one (it is removed afterwards) and run the example against it,
from this directory:

	../../scripts/with-postgres go run .

or set LEASE_POSTGRES_DSN, or pass -dsn, to a database where the example
may create the table leader_election_example.
`, err)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// event is what a candidate reports.
type event struct {
	name  string
	kind  string // "leads", "follows", "stopped"
	value string // for "follows": the leader's value
}

// candidates are the two candidates, however they run.
type candidates interface {
	// events delivers what the candidates report.
	events() <-chan event
	// crash ends a candidate without letting it release its lock, if the
	// candidates can crash, and says so; otherwise it stops it.
	crash(name string) (crashed bool, err error)
	// stop ends a candidate gracefully: it resigns.
	stop(name string) error
	// close ends everything and waits for it.
	close() error
}

// run starts alice and bob, and narrates to out as the leader changes.
func run(ctx context.Context, cfg config, out io.Writer) error {
	if cfg.lease <= 0 {
		return fmt.Errorf("-lease %v: must be positive", cfg.lease)
	}
	var (
		c   candidates
		err error
	)
	if cfg.memory {
		c, err = startInMemory(ctx, cfg.lease)
	} else {
		c, err = startProcesses(ctx, cfg)
	}
	if err != nil {
		return err
	}
	defer c.close()
	fmt.Fprintf(out, "alice and bob campaign for %q (lease %v)\n", electionName, cfg.lease)

	r := &reports{c: c}
	leader, err := r.await(ctx, "leads", "", "")
	if err != nil {
		return err
	}
	other := map[string]string{"alice": "bob", "bob": "alice"}[leader.name]
	fmt.Fprintf(out, "%s leads\n", leader.name)
	if _, err := r.await(ctx, "follows", other, leader.name); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s sees %s lead\n", other, leader.name)

	killed := time.Now()
	crashed, err := c.crash(leader.name)
	if err != nil {
		return err
	}
	if crashed {
		fmt.Fprintf(out, "%s is killed: it releases nothing, its lease must expire\n", leader.name)
	} else {
		fmt.Fprintf(out, "%s is stopped: it releases the lock\n", leader.name)
	}
	if _, err := r.await(ctx, "leads", other, ""); err != nil {
		return err
	}
	took := time.Since(killed)
	fmt.Fprintf(out, "%s leads\n", other)
	bound := cfg.lease + cfg.lease/3
	if !crashed {
		bound = cfg.lease / 3
	}
	fmt.Fprintf(out, "takeover within %v: %t\n", bound.Round(time.Millisecond), took < bound)
	// Printed to stderr: it differs from run to run.
	fmt.Fprintf(os.Stderr, "(took %v)\n", took.Round(time.Millisecond))

	if err := c.stop(other); err != nil {
		return err
	}
	if _, err := r.await(ctx, "stopped", other, ""); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s resigns and stops\n", other)
	return c.close()
}

// waitLimit bounds every wait for a candidate's report.
const waitLimit = 30 * time.Second

// reports reads the candidates' events in the order they came, keeping
// those a wait skipped for a later one: the two candidates report
// independently, so a follower may say who leads before the leader does.
type reports struct {
	c       candidates
	backlog []event
}

// await returns the first event of kind from name (from anyone for "")
// whose value is value (any value for ""), waiting for it.
func (r *reports) await(ctx context.Context, kind, name, value string) (event, error) {
	match := func(ev event) bool {
		return ev.kind == kind && (name == "" || ev.name == name) && (value == "" || ev.value == value)
	}
	for i, ev := range r.backlog {
		if match(ev) {
			r.backlog = append(r.backlog[:i], r.backlog[i+1:]...)
			return ev, nil
		}
	}
	limit := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-r.c.events():
			if !ok {
				return event{}, fmt.Errorf("the candidates ended before %s %s", or(name, "anyone"), kind)
			}
			if match(ev) {
				return ev, nil
			}
			if len(r.backlog) < maxBacklog {
				r.backlog = append(r.backlog, ev)
			}
		case <-limit:
			return event{}, fmt.Errorf("%s did not report %q within %v", or(name, "nobody"), kind, waitLimit)
		case <-ctx.Done():
			return event{}, ctx.Err()
		}
	}
}

// maxBacklog bounds the events kept for later: a run needs a handful.
const maxBacklog = 256

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
