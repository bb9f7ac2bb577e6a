package otel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/leasehold/lease/lock/election"
)

const (
	keyElection = attribute.Key("lease.election.name")
	keyChange   = attribute.Key("lease.election.change")
)

// electionObserver is the election.Observer of a Telemetry.
type electionObserver struct {
	leading metric.Int64UpDownCounter
	changes metric.Int64Counter
}

func (o *electionObserver) init(m metric.Meter, add func(error)) {
	var err error
	o.leading, err = m.Int64UpDownCounter("lease.election.leader",
		metric.WithDescription("Elections this process leads now: 1 while leading, by election."), metric.WithUnit("{election}"))
	add(err)
	o.changes, err = m.Int64Counter("lease.election.changes",
		metric.WithDescription("Leadership changes of this process, by election and change: elected or deposed."),
		metric.WithUnit("{change}"))
	add(err)
}

// Election returns the observer for election.WithObserver.
func (t *Telemetry) Election() election.Observer { return &t.election }

// Observe implements election.Observer.
func (o *electionObserver) Observe(e election.Event) {
	ctx := context.Background()
	name := keyElection.String(e.Election)
	delta := int64(1)
	if e.Kind == election.EventDeposed {
		delta = -1
	}
	o.leading.Add(ctx, delta, metric.WithAttributes(name))
	o.changes.Add(ctx, 1, metric.WithAttributes(name, keyChange.String(e.Kind.String())))
}
