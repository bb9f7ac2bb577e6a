package lease

import (
	"context"
	"log/slog"
)

// SlogLevels are the levels SlogObserverLevels logs decisions at. It is a
// plain value, safe to share.
type SlogLevels struct {
	// Routine is for allowed grants, renewals and uses, which a busy
	// service makes thousands of times a second.
	Routine slog.Level
	// Ended is for allowed revocations and expiries.
	Ended slog.Level
	// Denied is for every refused decision.
	Denied slog.Level
}

// DefaultSlogLevels are the levels SlogObserver uses: the levels a service
// keeps on in production see ends (Info) and denials (Warn), not every
// routine decision (Debug).
var DefaultSlogLevels = SlogLevels{Routine: slog.LevelDebug, Ended: slog.LevelInfo, Denied: slog.LevelWarn}

// SlogObserver returns an observer for WithAuditObserver that logs every
// Decision to logger at DefaultSlogLevels, as a "lease decision" record
// with the Decision as its "decision" group. A nil logger logs to
// slog.Default(), as LogPanic does, read when each decision is logged. It
// is safe for concurrent use, as a *slog.Logger is.
func SlogObserver(logger *slog.Logger) Observer[Decision] {
	return SlogObserverLevels(logger, DefaultSlogLevels)
}

// SlogObserverLevels is SlogObserver with the levels given. A decision
// whose level the logger does not enable costs a level check and nothing
// more. A nil logger logs to slog.Default().
func SlogObserverLevels(logger *slog.Logger, levels SlogLevels) Observer[Decision] {
	return ObserverFunc[Decision](func(d Decision) {
		logger := logger
		if logger == nil {
			logger = slog.Default()
		}
		level := levels.Routine
		switch {
		case !d.Allowed:
			level = levels.Denied
		case d.Action == ActionRevoke || d.Action == ActionExpire:
			level = levels.Ended
		}
		ctx := context.Background()
		if !logger.Enabled(ctx, level) {
			return
		}
		logger.LogAttrs(ctx, level, "lease decision", slog.Any("decision", d))
	})
}
