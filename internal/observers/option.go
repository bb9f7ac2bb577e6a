package observers

import "github.com/leasehold/lease"

// Set is the body of every package's WithObserver: it refuses a nil o
// through refuse and reports false, or makes o the observer in *dst and
// reports true.
func Set[E any](refuse func(option, detail string), dst *lease.Observer[E], o lease.Observer[E]) bool {
	if o == nil {
		refuse("WithObserver", "observer must not be nil")
		return false
	}
	*dst = o
	return true
}
