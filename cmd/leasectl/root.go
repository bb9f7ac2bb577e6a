package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// app holds the global flags, which every command reads.
type app struct {
	dsn    string // --dsn
	envDSN string // LEASE_DSN, used when --dsn is not given
	json   bool
	tables tables
}

// newRoot returns the command tree, its --dsn defaulting to envDSN.
func newRoot(envDSN string) *cobra.Command {
	a := &app{envDSN: envDSN}
	root := &cobra.Command{
		Use:   "leasectl",
		Short: "Inspect and manage the work queues and locks of a lease store",
		Long: `leasectl inspects and manages the work queues and locks of a lease store.

The store is named by a DSN: --dsn, or else the LEASE_DSN environment
variable. A DSN is one of
  postgres://user@host:5432/db   PostgreSQL, as a URL (also postgresql://)
  host=HOST dbname=DB user=USER  PostgreSQL, as key=value pairs
  sqlite:PATH                    an SQLite file
Errors never show a DSN's password.

Exit status: 0 success, 1 error, 2 usage error, 3 not found.`,
		Args:          cobra.ArbitraryArgs, // needSubcommand says what is wrong
		RunE:          needSubcommand,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	// Not envDSN as the default: the help would show its password.
	pf.StringVar(&a.dsn, "dsn", "", "the store: postgres://..., host=... dbname=..., or sqlite:PATH (default $"+dsnEnv+")")
	pf.BoolVar(&a.json, "json", false, "print JSON instead of aligned text")
	pf.StringVar(&a.tables.schema, "schema", "", "the schema of the store's tables (default: the search path)")
	pf.StringVar(&a.tables.locks, "lock-table", "", "the table of the locks (default lease_locks)")
	pf.StringVar(&a.tables.claims, "claim-table", "", "the table of the items (default lease_claims)")
	root.AddCommand(a.migrateCmd(), a.queuesCmd(), a.queueCmd(), a.itemsCmd(), a.locksCmd(), a.leadersCmd())
	return root
}

// group returns a command that only holds subcommands: run alone, or with
// an unknown subcommand, it is a usage error (cobra would print the help
// and succeed).
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs, RunE: needSubcommand}
	c.AddCommand(subs...)
	return c
}

// needSubcommand is the RunE of a command that needs a subcommand.
func needSubcommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	switch {
	case len(args) > 0 && !cmd.HasParent():
		return usagef("unknown command %q: one of %s", args[0], strings.Join(names, ", "))
	case len(args) > 0:
		return usagef("%s has no command %q: one of %s", commandName(cmd), args[0], strings.Join(names, ", "))
	case !cmd.HasParent():
		return usagef("a command is needed: one of %s", strings.Join(names, ", "))
	}
	return usagef("%s needs a command: one of %s", commandName(cmd), strings.Join(names, ", "))
}

// commandName is cmd's path without the program's name, which every
// error already starts with: "queue pause".
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// withStore returns the RunE of a command that acts on the store: it
// opens the parts of the store u says, runs f, and closes them. Errors f
// returns are the command's (see exitCode), explained by the store when
// it can.
func (a *app) withStore(u use, f func(ctx context.Context, cmd *cobra.Command, args []string, s *store) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		s, err := openStore(ctx, a.storeDSN(), a.tables, u)
		if err != nil {
			return asCommandError(err)
		}
		defer s.close()
		err = f(ctx, cmd, args, s)
		if err != nil && s.missing != nil && !u.migrate {
			if what, ok := s.missing(err); ok {
				err = notSetUpError{part: u.part(), what: what, t: a.tables}
			}
		}
		return asCommandError(err)
	}
}

// storeDSN returns the DSN of the store: --dsn, else LEASE_DSN.
func (a *app) storeDSN() string {
	if a.dsn != "" {
		return a.dsn
	}
	return a.envDSN
}

// offline returns the RunE of a command that needs no connection.
func offline(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return asCommandError(f(cmd, args))
	}
}

// asCommandError marks err, unless nil or a usage error, as a command's.
func asCommandError(err error) error {
	var u usageError
	if err == nil || errors.As(err, &u) {
		return err
	}
	return commandError{err}
}

// exactArgs is cobra.ExactArgs with a message naming the arguments.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("%s takes %d argument(s): %s; got %d", commandName(cmd), len(names), strings.Join(names, " "), len(args))
		}
		return nil
	}
}

// noArgs is cobra.NoArgs with a message that names the command once.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, not %q", commandName(cmd), args[0])
	}
	return nil
}

// print writes v as JSON with --json, else calls text.
func (a *app) print(cmd *cobra.Command, v any, text func() error) error {
	if a.json {
		return writeJSON(cmd.OutOrStdout(), v)
	}
	if err := text(); err != nil {
		return fmt.Errorf("write the output: %w", err)
	}
	return nil
}
