package lease

import "slices"

// Observer is the one way every package of this module reports what it
// does as it does it: a value told about each fact of type E, one call of
// Observe per fact. The lease service has two such streams, its Events
// (WithObserver) and its audit Decisions (WithAuditObserver); the lock,
// claim and election packages each declare their own Event and name
// Observer[Event] their Observer.
//
// Every package calls an observer by the same rules: never under a lock
// of the library, so Observe may call back into it; a panic in Observe is
// recovered and reported to the package's WithPanicHandler (the service's
// Event observer as Callback "observer", its Decision observer as
// "audit observer"), and the next fact is delivered as if Observe had
// returned; nothing is observed after Close returns. Whether Observe must
// be safe for concurrent use is the package's to say: the lease service
// calls it from one goroutine at a time, the lock, claim and election
// packages from the goroutine of the call that caused the fact.
type Observer[E any] interface {
	Observe(E)
}

// ObserverFunc adapts a function to an Observer. Like any func value it is
// safe to share; the function decides its own concurrency.
type ObserverFunc[E any] func(E)

// Observe calls f(e).
func (f ObserverFunc[E]) Observe(e E) { f(e) }

// Observers returns one Observer that tells each of list about every fact,
// in the order given, so that several consumers (metrics and a logger, say)
// share one option. Nil entries are left out; with no entry left it
// returns nil, which the options refuse as they refuse any nil observer.
//
// The result has a method Unwrap() []Observer[E] that returns the
// observers it joins, through which the packages find their optional
// interfaces: lock.WithObserver(lease.Observers(a, b)) wraps each holding
// in every lock.HoldTracer among a and b, as claim.WithObserver does with
// every claim.HandlerTracer.
//
// A panic in one of them does not keep the ones after it from the fact:
// they are called, and then the panic goes on to the package's panic
// policy, which reports it once (the last one, should several panic). The
// observers share each fact: one that changes a slice in it (an election
// Leader's Value) changes it for those after it. The result is safe for
// concurrent use if every observer in list is.
func Observers[E any](list ...Observer[E]) Observer[E] {
	var fan fanOut[E]
	for _, o := range list {
		if o != nil {
			fan = append(fan, o)
		}
	}
	switch len(fan) {
	case 0:
		return nil
	case 1:
		return fan[0]
	}
	return fan
}

// fanOut is what Observers returns for two observers or more.
type fanOut[E any] []Observer[E]

// Unwrap returns the observers f tells, in order, in a slice of the
// caller's own: the packages with optional observer interfaces (such as
// lock.HoldTracer) look for them among these.
func (f fanOut[E]) Unwrap() []Observer[E] {
	return slices.Clone(f)
}

// Observe tells each observer about e. Should one panic, the deferred call
// tells the rest while the panic is under way, so that the panic policy
// that recovers it still sees the stack of the observer that panicked.
func (f fanOut[E]) Observe(e E) {
	next := 0
	defer func() {
		if next < len(f) {
			f[next:].Observe(e)
		}
	}()
	for next < len(f) {
		o := f[next]
		next++
		o.Observe(e)
	}
}
