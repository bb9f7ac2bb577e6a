// Package observers finds, among the observers lease.Observers joined, the
// ones with an optional interface of their package (lock.HoldTracer,
// claim.HandlerTracer), so that joining observers never loses what one of
// them does besides observing.
package observers

import "github.com/leasehold/lease"

// Find returns o itself if it implements T, or else the observers o joins
// (through its Unwrap() []lease.Observer[E] method, as lease.Observers'
// result has) that do, in order, searched in depth. It returns nil if
// there are none.
func Find[T, E any](o lease.Observer[E]) []T {
	if t, ok := o.(T); ok {
		return []T{t}
	}
	joined, ok := o.(interface{ Unwrap() []lease.Observer[E] })
	if !ok {
		return nil
	}
	var found []T
	for _, x := range joined.Unwrap() {
		found = append(found, Find[T](x)...)
	}
	return found
}
