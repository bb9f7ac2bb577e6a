// Command quickstart shows the lease service: grant, keys, renew, a purpose
// mismatch, expiry and the audit trail, on a fake clock so it runs instantly.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc, err := lease.New(lease.WithClock(clock))
	if err != nil {
		return err
	}
	defer svc.Close()
	svc.OnEnd(func(l lease.Lease, reason lease.EndReason) {
		if reason == lease.EndExpired {
			fmt.Fprintf(w, "expired: lease %d of %s, deleted keys %v\n", l.ID, l.Holder, l.Keys)
		}
	})

	l, err := svc.Grant(ctx, "worker-1", lease.StateWrite, 10*time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "granted: lease %d, ttl %v, expires %s\n", l.ID, l.TTL, l.ExpiresAt.Format(time.TimeOnly))

	for _, k := range []string{"jobs/42/owner", "jobs/42/progress"} {
		if err := svc.Put(ctx, k, []byte("worker-1"), l.ID); err != nil {
			return err
		}
	}

	clock.Advance(6 * time.Second)
	l, _ = svc.Renew(ctx, l.ID)
	fmt.Fprintf(w, "renewed at %s: expires %s\n", clock.Now().Format(time.TimeOnly), l.ExpiresAt.Format(time.TimeOnly))

	_, err = svc.Use(ctx, l.ID, lease.MigrationHandoff)
	var le *lease.Error
	if errors.As(err, &le) {
		fmt.Fprintf(w, "use for %s refused: %s (%s)\n", le.Expected, le.Code, err)
	}

	clock.Advance(10 * time.Second)
	_, err = svc.Use(ctx, l.ID, lease.StateWrite)
	fmt.Fprintf(w, "use after expiry: %v (stale: %t)\n", lease.CodeOf(err), errors.Is(err, lease.ErrStaleUse))
	_, _, found, err := svc.Get(ctx, "jobs/42/owner")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "key still there: %t\n", found)

	fmt.Fprintln(w, "audit trail:")
	for _, d := range svc.Audit() {
		status := "allowed"
		if !d.Allowed {
			status = "denied " + string(d.Code)
		}
		fmt.Fprintf(w, "  %s rev %-2d %-6s lease %d: %s (%s)\n", d.Timestamp.Format(time.TimeOnly), d.Revision, d.Action, d.LeaseID, status, d.Reason)
	}
	return nil
}
