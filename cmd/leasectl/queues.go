package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/leasehold/lease/claim"
)

// queuePage is how many queues one call of Broker.Queues returns.
const queuePage = 500

// queueJSON is a queue in JSON output.
type queueJSON struct {
	Name      string     `json:"name"`
	Visible   int        `json:"visible"`
	Delayed   int        `json:"delayed"`
	Claimed   int        `json:"claimed"`
	Dead      int        `json:"dead"`
	Completed int        `json:"completed"`
	Cancelled int        `json:"cancelled"`
	Paused    bool       `json:"paused"`
	PausedAt  *time.Time `json:"paused_at,omitempty"`
}

func (a *app) queuesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "queues",
		Short: "List the queues with the number of items in each state, and whether they are paused",
		Args:  noArgs,
		RunE:  a.withStore(useClaims, a.queues),
	}
}

func (a *app) queues(ctx context.Context, cmd *cobra.Command, _ []string, s *store) error {
	out := []queueJSON{}
	q := claim.QueueQuery{Limit: queuePage}
	for {
		page, err := s.broker.Queues(ctx, q)
		if err != nil {
			return err
		}
		for _, info := range page {
			c := info.Counts
			out = append(out, queueJSON{
				Name: info.Name, Visible: c.Visible, Delayed: c.Delayed, Claimed: c.Claimed, Dead: c.Dead,
				Completed: c.Completed, Cancelled: c.Cancelled, Paused: info.Paused, PausedAt: timeJSON(info.PausedAt),
			})
		}
		if len(page) < q.Limit {
			break
		}
		q.After = page[len(page)-1].Name
	}
	return a.print(cmd, out, func() error {
		rows := make([][]string, len(out))
		for i, q := range out {
			paused := "no"
			if q.Paused {
				paused = "since " + timeText(*q.PausedAt)
			}
			rows[i] = []string{q.Name, strconv.Itoa(q.Visible), strconv.Itoa(q.Delayed), strconv.Itoa(q.Claimed),
				strconv.Itoa(q.Dead), strconv.Itoa(q.Completed), strconv.Itoa(q.Cancelled), paused}
		}
		return writeTable(cmd.OutOrStdout(),
			[]string{"QUEUE", "VISIBLE", "DELAYED", "CLAIMED", "DEAD", "COMPLETED", "CANCELLED", "PAUSED"}, rows)
	})
}

func (a *app) queueCmd() *cobra.Command {
	pause := &cobra.Command{
		Use:   "pause QUEUE",
		Short: "Pause a queue: its workers get no more claims until it is resumed",
		Args:  exactArgs("QUEUE"),
		RunE: a.withStore(useClaims, func(ctx context.Context, cmd *cobra.Command, args []string, s *store) error {
			return a.pauseQueue(ctx, cmd, s, args[0], true)
		}),
	}
	resume := &cobra.Command{
		Use:   "resume QUEUE",
		Short: "Resume a paused queue",
		Args:  exactArgs("QUEUE"),
		RunE: a.withStore(useClaims, func(ctx context.Context, cmd *cobra.Command, args []string, s *store) error {
			return a.pauseQueue(ctx, cmd, s, args[0], false)
		}),
	}
	return group("queue", "Pause or resume a queue", pause, resume)
}

// pauseQueue pauses queue, or resumes it, and says what changed: a queue
// with no items that was not paused is created, paused.
func (a *app) pauseQueue(ctx context.Context, cmd *cobra.Command, s *store, queue string, pause bool) error {
	if queue == "" {
		return usagef("the queue's name must not be empty")
	}
	before, known, err := queueInfo(ctx, s.broker, queue)
	if err != nil {
		return err
	}
	change, result, text := s.broker.PauseQueue, "paused", "paused"
	switch {
	case !pause:
		change, result, text = s.broker.ResumeQueue, "resumed", "resumed"
		if known && !before.Paused {
			result, text = "not paused", "was not paused: nothing changed"
		}
	case known && before.Paused:
		result, text = "already paused", "was already paused, since "+timeText(before.PausedAt)+": nothing changed"
	case known && before.Counts == (claim.Counts{}):
		result, text = "created paused", "had no items: created it, paused; its workers take nothing until 'leasectl queue resume "+queue+"'"
	}
	if err := change(ctx, queue); err != nil {
		return err
	}
	v := struct {
		Queue  string `json:"queue"`
		Paused bool   `json:"paused"`
		Result string `json:"result"`
	}{queue, pause, result}
	return a.print(cmd, v, func() error {
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "queue %s %s\n", queue, text)
		return err
	})
}

// queueInfo returns what the store lists of queue: its counts and whether
// it is paused. The listing holds the queues with items and the paused
// ones, so it reads it from just below queue's name, a few pages at most;
// known is false when those pages did not reach it.
func queueInfo(ctx context.Context, b *claim.Broker, queue string) (info claim.QueueInfo, known bool, err error) {
	const pages = 5
	info.Name = queue
	_, size := utf8.DecodeLastRuneInString(queue)
	q := claim.QueueQuery{After: queue[:len(queue)-size], Limit: queuePage} // a prefix sorts first
	for range pages {
		page, err := b.Queues(ctx, q)
		if err != nil {
			return info, false, err
		}
		for _, qi := range page {
			if qi.Name == queue {
				return qi, true, nil
			}
			if qi.Name > queue {
				return info, true, nil // neither items nor paused
			}
		}
		if len(page) < q.Limit {
			return info, true, nil
		}
		q.After = page[len(page)-1].Name
	}
	return info, false, nil
}
