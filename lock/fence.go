package lock

import "sync"

// Fence is the resource side of fencing: it remembers the highest token it
// has accepted per lock name and refuses older ones, so a holder that lost
// its lock (a long pause, a partition) cannot overwrite the work of the
// holder that took over. Check the token in the same critical section as the
// write it guards.
//
// The zero Fence is ready to use. A Fence is safe for concurrent use.
type Fence struct {
	mu      sync.Mutex
	highest map[string]uint64
}

// Check accepts token for name if it is at least the highest token accepted
// for name so far (the same holder may write many times) and records it. An
// older token gets a *StaleTokenError matching ErrStaleToken, and nothing
// changes.
func (f *Fence) Check(name string, token uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.highest[name]; token < h {
		return &StaleTokenError{Name: name, Token: token, Highest: h}
	}
	if f.highest == nil {
		f.highest = make(map[string]uint64)
	}
	f.highest[name] = token
	return nil
}

// Highest returns the highest token accepted for name, 0 if none.
func (f *Fence) Highest(name string) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.highest[name]
}
