package lease

import (
	"context"
	"log/slog"
	"time"
)

// Action names what a Decision was about.
type Action string

// The audited actions.
const (
	ActionGrant  Action = "grant"
	ActionRenew  Action = "renew"
	ActionUse    Action = "use"
	ActionRevoke Action = "revoke"
	ActionExpire Action = "expire"
)

// Decision is one audit record: what was asked, of which lease, and whether
// it was allowed. Denied decisions carry the error Code.
type Decision struct {
	LeaseID   ID
	Action    Action
	Allowed   bool
	Code      Code   // "" when allowed
	Reason    string // human-readable; not stable
	Holder    string // the lease's holder, when the lease is known
	TraceID   string
	Timestamp time.Time // the service clock's time of the decision
	Revision  int64     // the service revision after the decision
}

// LogValue implements slog.LogValuer so a Decision logs as a group.
func (d Decision) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.Uint64("lease_id", uint64(d.LeaseID)),
		slog.String("action", string(d.Action)),
		slog.Bool("allowed", d.Allowed),
	}
	if d.Code != "" {
		attrs = append(attrs, slog.String("code", string(d.Code)))
	}
	attrs = append(attrs,
		slog.String("reason", d.Reason),
		slog.String("holder", d.Holder),
		slog.Time("timestamp", d.Timestamp),
		slog.Int64("revision", d.Revision),
	)
	if d.TraceID != "" {
		attrs = append(attrs, slog.String("trace_id", d.TraceID))
	}
	return slog.GroupValue(attrs...)
}

// SlogSink returns an audit sink for WithAuditSink that logs every Decision
// to logger: allowed ones at Info, denied ones at Warn.
func SlogSink(logger *slog.Logger) func(Decision) {
	return func(d Decision) {
		level := slog.LevelInfo
		if !d.Allowed {
			level = slog.LevelWarn
		}
		logger.LogAttrs(context.Background(), level, "lease decision", slog.Any("decision", d))
	}
}

// auditRing keeps the most recent decisions in a fixed buffer so a
// long-running service never grows. Records keep their time as service
// nanoseconds and get their Timestamp when read, which keeps recording cheap.
type auditRing struct {
	buf  []auditRecord
	next int // slot for the next record
	full bool
}

type auditRecord struct {
	d  Decision // Timestamp unset
	at int64
}

func newAuditRing(capacity int) auditRing {
	return auditRing{buf: make([]auditRecord, capacity)}
}

// claim takes the slot for a record at time at and returns its Decision to
// fill in, or nil when the ring keeps nothing.
func (r *auditRing) claim(at int64) *Decision {
	if len(r.buf) == 0 {
		return nil
	}
	rec := &r.buf[r.next]
	rec.at = at
	if r.next++; r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
	return &rec.d
}

// snapshot returns the retained decisions, oldest first.
func (r *auditRing) snapshot(toTime func(int64) time.Time) []Decision {
	var recs []auditRecord
	if r.full {
		recs = append(r.buf[r.next:len(r.buf):len(r.buf)], r.buf[:r.next]...)
	} else {
		recs = r.buf[:r.next]
	}
	out := make([]Decision, len(recs))
	for i, rec := range recs {
		out[i] = rec.d
		out[i].Timestamp = toTime(rec.at)
	}
	return out
}
