package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

func (a *app) migrateCmd() *cobra.Command {
	up := &cobra.Command{
		Use:   "up",
		Short: "Apply the store's migrations: create or update the tables of the locks and of the items",
		Long: `Apply the store's migrations: create or update the tables of the locks and
of the items. It is idempotent and safe to run from several places at once.`,
		Args: noArgs,
		RunE: a.withStore(useMigrate, a.migrateUp),
	}
	var part string
	var version int
	sql := &cobra.Command{
		Use:   "sql",
		Short: "Print the SQL of each migration, numbered, to apply with a migration tool",
		Long: `Print the SQL of each migration, numbered, for a migration tool (goose,
golang-migrate, atlas) to apply instead of 'migrate up'. Only the DSN's
kind is read: nothing connects to the store. Each migration of the items'
table records itself in the table of applied migrations, so 'migrate up'
and the applications' own Migrate calls find it applied.`,
		Args: noArgs,
		RunE: offline(func(cmd *cobra.Command, _ []string) error {
			return a.migrateSQL(cmd, part, version)
		}),
	}
	sql.Flags().StringVar(&part, "part", "", "only the migrations of this part: "+partLocks+" or "+partClaims)
	sql.Flags().IntVar(&version, "version", 0, "only this version (needs --part)")
	return group("migrate", "Apply or print the store's migrations", up, sql)
}

func (a *app) migrateUp(ctx context.Context, cmd *cobra.Command, _ []string, s *store) error {
	done, err := s.migrate(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return a.print(cmd, done, func() error {
		rows := make([][]string, len(done))
		for i, m := range done {
			rows[i] = []string{m.Part, m.Table, strconv.Itoa(m.Version)}
		}
		return writeTable(cmd.OutOrStdout(), []string{"PART", "TABLE", "VERSION"}, rows)
	})
}

func (a *app) migrateSQL(cmd *cobra.Command, part string, version int) error {
	switch {
	case part != "" && part != partLocks && part != partClaims:
		return usagef("--part is %s or %s, not %q", partLocks, partClaims, part)
	case version != 0 && part == "":
		return usagef("--version needs --part")
	case version < 0:
		return usagef("--version must be positive, not %d", version)
	}
	d, err := driverFor(a.storeDSN())
	if err != nil {
		return err
	}
	all, err := d.migrations(a.tables)
	if err != nil {
		return err
	}
	var out []migration
	for _, m := range all {
		if (part == "" || m.Part == part) && (version == 0 || m.Version == version) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return notFoundError{fmt.Sprintf("migration %s %d", part, version)}
	}
	return a.print(cmd, out, func() error {
		w := cmd.OutOrStdout()
		for i, m := range out {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if _, err := fmt.Fprintf(w, "-- %s %d\n%s", m.Part, m.Version, m.SQL); err != nil {
				return err
			}
		}
		return nil
	})
}
