package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// waitCounter is a lock provider that can count who waits for its locks,
// in every process (PostgreSQL's can).
type waitCounter interface {
	WaitCounts(ctx context.Context, names []string) (map[string]int, error)
}

// lockJSON is a held lock in JSON output. Waiters is null when the
// provider cannot count them.
type lockJSON struct {
	Name      string     `json:"name"`
	Holder    string     `json:"holder"`
	Token     uint64     `json:"token"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Value     *string    `json:"value,omitempty"`
	Waiters   *int       `json:"waiters"`
}

func (a *app) locksCmd() *cobra.Command {
	var prefix string
	var limit int
	c := &cobra.Command{
		Use:   "locks",
		Short: "List the locks held, in name order, with holder, fencing token, expiry and waiters",
		Long: `List the locks held, in name order: each with its holder (the execution ID
it was acquired with), its fencing token, when its lease expires unless
renewed, and how many callers wait for it, in every process ("-" where
the store cannot count them).`,
		Args: noArgs,
		RunE: a.withStore(useLocks, func(ctx context.Context, cmd *cobra.Command, _ []string, s *store) error {
			if limit < 0 {
				return usagef("--limit must not be negative, not %d", limit)
			}
			return a.locks(ctx, cmd, s, prefix, limit)
		}),
	}
	c.Flags().StringVar(&prefix, "prefix", "", "only locks whose names start with this")
	c.Flags().IntVar(&limit, "limit", 0, "at most this many locks (0 for all)")
	return c
}

func (a *app) locks(ctx context.Context, cmd *cobra.Command, s *store, prefix string, limit int) error {
	held, err := s.locks.Held(ctx, prefix, limit)
	if err != nil {
		return err
	}
	var waiting map[string]int
	if wc, ok := s.locks.(waitCounter); ok && len(held) > 0 {
		names := make([]string, len(held))
		for i, h := range held {
			names[i] = h.Name
		}
		if waiting, err = wc.WaitCounts(ctx, names); err != nil {
			return err
		}
	}
	out := make([]lockJSON, len(held))
	rows := make([][]string, len(held))
	for i, h := range held {
		out[i] = lockJSON{Name: h.Name, Holder: h.ExecutionID, Token: h.Token, ExpiresAt: timeJSON(h.ExpiresAt)}
		if h.Value != nil {
			v := bytesText(h.Value)
			out[i].Value = &v
		}
		waiters := "-"
		if waiting != nil {
			n := waiting[h.Name]
			out[i].Waiters, waiters = &n, strconv.Itoa(n)
		}
		rows[i] = []string{h.Name, h.ExecutionID, strconv.FormatUint(h.Token, 10), timeText(h.ExpiresAt), waiters}
	}
	return a.print(cmd, out, func() error {
		return writeTable(cmd.OutOrStdout(), []string{"LOCK", "HOLDER", "TOKEN", "EXPIRES", "WAITERS"}, rows)
	})
}

// leaderJSON is an election's leader in JSON output; Leader is false, and
// the other fields empty, when nobody leads.
type leaderJSON struct {
	Election  string     `json:"election"`
	Leader    bool       `json:"leader"`
	Value     string     `json:"value,omitempty"`
	Token     uint64     `json:"token,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

func (a *app) leadersCmd() *cobra.Command {
	var prefix string
	c := &cobra.Command{
		Use:   "leaders [ELECTION...]",
		Short: "Show who leads each election",
		Long: `Show who leads each election named, or, with no names, each election whose
lock is held and whose name starts with --prefix: the value the leader
campaigned with, its fencing token and when its lease expires unless
renewed. An election is a lock, so without names every lock held under the
prefix is shown as an election. When an election named has no leader, the
exit status is 3.`,
		RunE: a.withStore(useLocks, func(ctx context.Context, cmd *cobra.Command, args []string, s *store) error {
			return a.leaders(ctx, cmd, s, args, prefix)
		}),
	}
	c.Flags().StringVar(&prefix, "prefix", "", "with no names, only elections whose names start with this")
	return c
}

func (a *app) leaders(ctx context.Context, cmd *cobra.Command, s *store, names []string, prefix string) error {
	if len(names) == 0 {
		held, err := s.locks.Held(ctx, prefix, 0)
		if err != nil {
			return err
		}
		for _, h := range held {
			names = append(names, h.Name)
		}
	}
	out := make([]leaderJSON, 0, len(names))
	var missing []string
	for _, name := range names {
		l, err := leaderOf(ctx, s.locks, name)
		if errors.Is(err, election.ErrNoLeader) {
			missing = append(missing, name)
			out = append(out, leaderJSON{Election: name})
			continue
		}
		if err != nil {
			return err
		}
		lj := leaderJSON{Election: name, Leader: true, Token: l.Token, ExpiresAt: timeJSON(l.ExpiresAt)}
		if len(l.Value) > 0 {
			lj.Value = bytesText(l.Value)
		}
		out = append(out, lj)
	}
	err := a.print(cmd, out, func() error {
		rows := make([][]string, len(out))
		for i, l := range out {
			rows[i] = []string{l.Election, "-", "-", "-"}
			if l.Leader {
				rows[i] = []string{l.Election, orDash(l.Value), strconv.FormatUint(l.Token, 10), timeText(*l.ExpiresAt)}
			}
		}
		return writeTable(cmd.OutOrStdout(), []string{"ELECTION", "LEADER", "TOKEN", "EXPIRES"}, rows)
	})
	if err == nil && len(missing) > 0 {
		err = notFoundError{"a leader of " + strings.Join(missing, ", ")}
	}
	return err
}

// leaderOf returns who leads the election name on p.
func leaderOf(ctx context.Context, p lock.Provider, name string) (election.Leader, error) {
	e, err := election.New(p, name)
	if err != nil {
		return election.Leader{}, usageError{err}
	}
	l, err := e.Leader(ctx)
	if err != nil && !errors.Is(err, election.ErrNoLeader) {
		return election.Leader{}, fmt.Errorf("election %s: %w", name, err)
	}
	return l, err
}
