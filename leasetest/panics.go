package leasetest

import (
	"sync"

	"github.com/leasehold/lease"
)

// PanicRecorder records the panics a package reports, for tests of code
// that gives callbacks to the lease, claim or lock packages: pass its Handle
// to their WithPanicHandler options. The zero PanicRecorder is ready to
// use. It is safe for concurrent use.
type PanicRecorder struct {
	mu  sync.Mutex
	got []*lease.PanicError
}

// Handle records p. Its signature fits every WithPanicHandler option.
func (r *PanicRecorder) Handle(p *lease.PanicError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
}

// Panics returns the recorded panics, oldest first, in a new slice.
func (r *PanicRecorder) Panics() []*lease.PanicError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*lease.PanicError(nil), r.got...)
}

// Callbacks returns the Callback names of the recorded panics, oldest first.
func (r *PanicRecorder) Callbacks() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.got {
		out = append(out, p.Callback)
	}
	return out
}
