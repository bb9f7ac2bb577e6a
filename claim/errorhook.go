package claim

import "context"

// HandlerFailure is a Work handler's failure, as the error hook
// (WithErrorHook) is told of it. It is a plain value, safe to copy; its
// Claim's Payload is the hook's own copy.
type HandlerFailure struct {
	// Claim is the claim the handler ran on: the item's Queue, ID, Kind
	// and Payload, and the Owner.
	Claim Claim
	// Attempt is the claim's attempt, 1 for the first.
	Attempt int
	// Err is what the handler returned, or for a panic an error whose text
	// is "panic: " and the value: the reason kept in the item's history
	// (which also says when the handler timed out).
	Err error
	// Panic is the value the handler panicked with, when Panicked.
	Panic    any
	Panicked bool
	// Outcome is what became of the item: Requeued, or DeadLettered (out
	// of attempts, or discarded with Discard); zero when the claim had been
	// lost meanwhile and the item was not the worker's to settle.
	Outcome Outcome
}

// WithErrorHook makes Work call h after each handler that failed, that is
// returned an error other than Snooze's or panicked, once the item has been
// settled: h learns of the failure whether the item was requeued or
// dead-lettered. It is not called for a handler whose claim was lost or
// whose item was cancelled while it ran, nor for one handed back by the
// stop timeout. h runs on the handler's goroutine, outside every lock, with
// a context that carries the handler's values but is never cancelled; its
// slot takes the next item meanwhile, so a slow hook delays only the next
// settlement. A panic in h is reported to the panic handler (Callback
// "error hook", see lease.WithPanicHandler) and Work goes on. New returns an
// error if h is nil.
func WithErrorHook(h func(ctx context.Context, f HandlerFailure)) Option {
	return optionFunc(func(o *options) {
		if h == nil {
			o.refuse("WithErrorHook", "hook must not be nil")
			return
		}
		o.onError = h
	})
}

// hookFailure tells the error hook, if any, of f under the panic policy.
func (b *Broker) hookFailure(ctx context.Context, f HandlerFailure) {
	if h := b.opts.onError; h != nil {
		f.Claim.Payload = clone(f.Claim.Payload) // the handler may have kept it
		b.call("error hook", func() { h(ctx, f) })
	}
}
