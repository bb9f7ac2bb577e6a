// Command leasectl inspects and manages the work queues and locks of a
// lease store from the command line: it applies or prints the store's
// migrations, lists queues and items, retries, cancels and deletes items,
// pauses and resumes queues, and shows who holds each lock and leads each
// election.
//
// It reaches the store through a DSN, given with --dsn or the LEASE_DSN
// environment variable (postgres://... for PostgreSQL). Output is aligned
// text, or JSON with --json. The exit status is 0 on success, 1 on an
// error, 2 for a usage error and 3 when the item, queue or election asked
// for does not exist. docs/cli.md in the repository describes every
// command.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/leasehold/lease/claim"
)

// The exit statuses of leasectl, which scripts may rely on.
const (
	exitOK       = 0 // the command did what it was asked
	exitError    = 1 // it failed: the store is unreachable, refused, ...
	exitUsage    = 2 // the command line is wrong
	exitNotFound = 3 // the item, queue or election asked for does not exist
)

// dsnEnv is the environment variable read when --dsn is not given.
const dsnEnv = "LEASE_DSN"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs leasectl with args (without the program's name), writing its
// output to stdout and its errors to stderr, and returns its exit status.
// The DSN comes from --dsn, else from LEASE_DSN. Errors are written with
// every password taken out (redact), and a usage error with a pointer to
// the help of the command it was for.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	envDSN := os.Getenv(dsnEnv)
	root := newRoot(envDSN)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	flagDSN, _ := root.PersistentFlags().GetString("dsn")
	fmt.Fprintf(stderr, "leasectl: %s\n", redact(err.Error(), append([]string{flagDSN, envDSN}, args...)...))
	if code == exitUsage {
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// commandError is an error returned by a command's own work, as opposed to
// one of the command line's parsing, which is a usage error.
type commandError struct{ err error }

func (e commandError) Error() string { return e.err.Error() }
func (e commandError) Unwrap() error { return e.err }

// usageError marks an error as the command line's fault.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// notFoundError reports a thing asked for that does not exist.
type notFoundError struct{ what string }

func (e notFoundError) Error() string { return e.what + ": not found" }

// errNotFound is matched by the errors of things not found in the store.
var errNotFound = errors.New("not found")

func (e notFoundError) Is(target error) bool { return target == errNotFound }

// exitCode returns the exit status for err. Errors that did not come from
// a command's own work come from parsing the command line (an unknown
// command or flag, a missing argument): usage errors.
func exitCode(err error) int {
	var ce commandError
	var ue usageError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case !errors.As(err, &ce):
		return exitUsage
	case errors.Is(err, errNotFound), errors.Is(err, claim.ErrNotFound):
		return exitNotFound
	}
	return exitError
}
