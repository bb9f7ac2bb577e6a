package lease

import "context"

type traceKey struct{}

// WithTraceID returns a context carrying traceID. Operations called with it
// record the ID in their audit Decision, unless WithTraceIDFunc replaced how
// trace IDs are read.
func WithTraceID(ctx context.Context, traceID string) context.Context {
	return context.WithValue(ctx, traceKey{}, traceID)
}

// TraceIDFromContext returns the trace ID set by WithTraceID, or "".
func TraceIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}
