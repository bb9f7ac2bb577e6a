package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/lease/claim"
)

// defaultListLimit is how many items items list shows unless --limit says
// otherwise.
const defaultListLimit = 100

// itemJSON is an item in JSON output. A payload or metadata that is valid
// JSON is given as it is, any other in base64.
type itemJSON struct {
	ID             claim.ItemID    `json:"id"`
	Queue          string          `json:"queue"`
	Kind           string          `json:"kind,omitempty"`
	Key            string          `json:"key,omitempty"`
	State          string          `json:"state"`
	Attempts       int             `json:"attempts"`
	MaxAttempts    int             `json:"max_attempts"`
	Priority       int             `json:"priority"`
	Timeout        string          `json:"timeout,omitempty"`
	Tags           []string        `json:"tags,omitempty"`
	EnqueuedAt     *time.Time      `json:"enqueued_at,omitempty"`
	VisibleAt      *time.Time      `json:"visible_at,omitempty"`
	DeadAt         *time.Time      `json:"dead_at,omitempty"`
	FinishedAt     *time.Time      `json:"finished_at,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	PayloadBase64  string          `json:"payload_base64,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	MetadataBase64 string          `json:"metadata_base64,omitempty"`
	History        []failureJSON   `json:"history,omitempty"`
}

// failureJSON is a failed attempt in JSON output.
type failureJSON struct {
	Attempt int        `json:"attempt"`
	Owner   string     `json:"owner"`
	At      *time.Time `json:"at,omitempty"`
	Reason  string     `json:"reason"`
	Lost    bool       `json:"lost"`
}

func itemOut(it claim.Item) itemJSON {
	out := itemJSON{
		ID: it.ID, Queue: it.Queue, Kind: it.Kind, Key: it.Key, State: it.State.String(),
		Attempts: it.Attempts, MaxAttempts: it.MaxAttempts, Priority: it.Priority, Tags: it.Tags,
		EnqueuedAt: timeJSON(it.EnqueuedAt), VisibleAt: timeJSON(it.VisibleAt),
		DeadAt: timeJSON(it.DeadAt), FinishedAt: timeJSON(it.FinishedAt),
	}
	if it.Timeout > 0 {
		out.Timeout = it.Timeout.String()
	}
	out.Payload, out.PayloadBase64 = jsonBytes(it.Payload)
	out.Metadata, out.MetadataBase64 = jsonBytes(it.Metadata)
	for _, f := range it.History {
		out.History = append(out.History, failureJSON{Attempt: f.Attempt, Owner: f.Owner, At: timeJSON(f.At), Reason: f.Reason, Lost: f.Lost})
	}
	return out
}

// states are the item states by name, as --state takes them.
var states = func() map[string]claim.State {
	m := map[string]claim.State{}
	for s := claim.Visible; s <= claim.Cancelled; s++ {
		m[s.String()] = s
	}
	return m
}()

// stateNames lists the names of the states, in their order.
func stateNames() string {
	var names []string
	for s := claim.Visible; s <= claim.Cancelled; s++ {
		names = append(names, s.String())
	}
	return strings.Join(names, ", ")
}

func (a *app) itemsCmd() *cobra.Command {
	var q claim.Query
	var state string
	var after uint64
	list := &cobra.Command{
		Use:   "list --queue QUEUE",
		Short: "List the items of a queue, a page at a time, in ID order",
		Long: `List the items of a queue, in ID order, at most --limit of them: a page.
For the next page, give --after the last ID of this one.`,
		Args: noArgs,
		RunE: a.withStore(useClaims, func(ctx context.Context, cmd *cobra.Command, _ []string, s *store) error {
			if state != "" {
				st, ok := states[state]
				if !ok {
					return usagef("--state is one of %s, not %q", stateNames(), state)
				}
				q.State = st
			}
			q.After = claim.ItemID(after)
			return a.listItems(ctx, cmd, s, q)
		}),
	}
	f := list.Flags()
	f.StringVar(&q.Queue, "queue", "", "the queue (required)")
	f.StringVar(&state, "state", "", "only items in this state: "+stateNames())
	f.StringVar(&q.Kind, "kind", "", "only items of this kind")
	f.StringVar(&q.Tag, "tag", "", "only items with this tag")
	f.Uint64Var(&after, "after", 0, "only items with an ID above this one")
	f.IntVar(&q.Limit, "limit", defaultListLimit, "at most this many items")
	_ = list.MarkFlagRequired("queue")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show an item: its fields, payload, metadata and failed attempts",
		Args:  exactArgs("ID"),
		RunE: a.withStore(useClaims, func(ctx context.Context, cmd *cobra.Command, args []string, s *store) error {
			it, err := lookup(ctx, s, args[0], "")
			if err != nil {
				return err
			}
			return a.print(cmd, itemOut(it), func() error { return showItem(cmd, it) })
		}),
	}
	retry := a.itemAction("retry", "Make a dead item visible again, with a fresh set of attempts",
		func(ctx context.Context, s *store, it claim.Item) (string, error) {
			if it.State != claim.Dead {
				return "", fmt.Errorf("item %d is %s: only a dead item can be retried", it.ID, it.State)
			}
			_, err := s.broker.RequeueDead(ctx, it.Queue, it.ID)
			return "requeued", err
		})
	cancel := a.itemAction("cancel", "Cancel an item, whatever its state; a running handler's context is cancelled",
		func(ctx context.Context, s *store, it claim.Item) (string, error) {
			if it.State == claim.Completed || it.State == claim.Cancelled {
				return "left " + it.State.String(), nil
			}
			return "cancelled", s.broker.Cancel(ctx, it.Queue, it.ID)
		})
	del := a.itemAction("delete", "Delete a dead item for good, freeing its key",
		func(ctx context.Context, s *store, it claim.Item) (string, error) {
			if it.State != claim.Dead {
				return "", fmt.Errorf("item %d is %s: only a dead item can be deleted (cancel the others)", it.ID, it.State)
			}
			return "deleted", s.broker.DeleteDead(ctx, it.Queue, it.ID)
		})
	return group("items", "List, show, retry, cancel or delete items", list, show, retry, cancel, del)
}

// itemAction returns the command name ID, which looks the item up (in
// --queue, when given) and calls do, which says what it did.
func (a *app) itemAction(name, short string, do func(context.Context, *store, claim.Item) (string, error)) *cobra.Command {
	var queue string
	c := &cobra.Command{
		Use:   name + " ID",
		Short: short,
		Args:  exactArgs("ID"),
		RunE: a.withStore(useClaims, func(ctx context.Context, cmd *cobra.Command, args []string, s *store) error {
			it, err := lookup(ctx, s, args[0], queue)
			if err != nil {
				return err
			}
			did, err := do(ctx, s, it)
			if errors.Is(err, claim.ErrNotFound) {
				return notFoundError{fmt.Sprintf("item %d (it changed meanwhile)", it.ID)}
			}
			if err != nil {
				return err
			}
			v := struct {
				ID     claim.ItemID `json:"id"`
				Queue  string       `json:"queue"`
				Result string       `json:"result"`
			}{it.ID, it.Queue, did}
			return a.print(cmd, v, func() error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "item %d of queue %s %s\n", it.ID, it.Queue, did)
				return err
			})
		}),
	}
	c.Flags().StringVar(&queue, "queue", "", "the item's queue: when given, an item of another queue is not found")
	return c
}

// lookup returns the item whose ID is arg, of queue unless queue is "".
func lookup(ctx context.Context, s *store, arg, queue string) (claim.Item, error) {
	id, err := strconv.ParseUint(arg, 10, 64)
	if err != nil || id == 0 {
		return claim.Item{}, usagef("an item's ID is a positive integer, not %q", arg)
	}
	it, err := s.broker.Lookup(ctx, claim.ItemID(id))
	if errors.Is(err, claim.ErrNotFound) || err == nil && queue != "" && it.Queue != queue {
		what := fmt.Sprintf("item %d", id)
		if queue != "" {
			what += " of queue " + queue
		}
		return claim.Item{}, notFoundError{what}
	}
	return it, err
}

func (a *app) listItems(ctx context.Context, cmd *cobra.Command, s *store, q claim.Query) error {
	if q.Queue == "" {
		return usagef("--queue must not be empty")
	}
	if q.Limit < 1 {
		return usagef("--limit must be at least 1, not %d", q.Limit)
	}
	items, err := s.broker.List(ctx, q)
	if err != nil {
		return err
	}
	out := make([]itemJSON, len(items))
	rows := make([][]string, len(items))
	for i, it := range items {
		out[i] = itemOut(it)
		rows[i] = []string{strconv.FormatUint(uint64(it.ID), 10), it.State.String(), orDash(it.Kind),
			fmt.Sprintf("%d/%d", it.Attempts, it.MaxAttempts), strconv.Itoa(it.Priority),
			timeText(it.EnqueuedAt), orDash(strings.Join(it.Tags, ","))}
	}
	return a.print(cmd, out, func() error {
		return writeTable(cmd.OutOrStdout(), []string{"ID", "STATE", "KIND", "ATTEMPTS", "PRIORITY", "ENQUEUED", "TAGS"}, rows)
	})
}

// showItem writes an item's fields, then its failed attempts.
func showItem(cmd *cobra.Command, it claim.Item) error {
	timeout := "-"
	if it.Timeout > 0 {
		timeout = it.Timeout.String()
	}
	w := cmd.OutOrStdout()
	err := writeFields(w, [][2]string{
		{"ID", strconv.FormatUint(uint64(it.ID), 10)},
		{"Queue", it.Queue},
		{"Kind", orDash(it.Kind)},
		{"Key", orDash(it.Key)},
		{"State", it.State.String()},
		{"Attempts", fmt.Sprintf("%d of %d", it.Attempts, it.MaxAttempts)},
		{"Priority", strconv.Itoa(it.Priority)},
		{"Timeout", timeout},
		{"Tags", orDash(strings.Join(it.Tags, ", "))},
		{"Enqueued", timeText(it.EnqueuedAt)},
		{"Visible", timeText(it.VisibleAt)},
		{"Dead", timeText(it.DeadAt)},
		{"Finished", timeText(it.FinishedAt)},
		{"Payload", bytesText(it.Payload)},
		{"Metadata", bytesText(it.Metadata)},
	})
	if err != nil || len(it.History) == 0 {
		return err
	}
	fmt.Fprintln(w, "\nFailed attempts:")
	rows := make([][]string, len(it.History))
	for i, f := range it.History {
		rows[i] = []string{strconv.Itoa(f.Attempt), timeText(f.At), orDash(f.Owner), strconv.FormatBool(f.Lost), f.Reason}
	}
	return writeTable(w, []string{"ATTEMPT", "AT", "OWNER", "LOST", "REASON"}, rows)
}
