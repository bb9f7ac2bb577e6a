package postgres

import (
	"math"

	"github.com/leasehold/lease/lock"
)

// leaseKey identifies one holding of a lock: what Renew and Release match.
type leaseKey struct {
	name        string
	executionID string
	token       uint64
}

func keyOf(l lock.Lease) leaseKey {
	return leaseKey{name: l.Name, executionID: l.ExecutionID, token: l.Token}
}

// batch is a list of leases as the column arrays one statement takes, each
// holding listed once.
type batch struct {
	names        []string
	executionIDs []string
	tokens       []int64
	// at maps each input lease to its position in the arrays, -1 for one
	// that is not sent.
	at []int
}

func newBatch(leases []lock.Lease) batch {
	b := batch{
		names:        make([]string, 0, len(leases)),
		executionIDs: make([]string, 0, len(leases)),
		tokens:       make([]int64, 0, len(leases)),
		at:           make([]int, len(leases)),
	}
	seen := make(map[leaseKey]int, len(leases))
	for i, l := range leases {
		b.at[i] = -1
		// Tokens are positive bigints: anything else was never issued here
		// and cannot match, so it is not worth sending.
		if l.Token == 0 || l.Token > math.MaxInt64 {
			continue
		}
		k := keyOf(l)
		if j, dup := seen[k]; dup {
			b.at[i] = j
			continue
		}
		seen[k] = len(b.names)
		b.at[i] = len(b.names)
		b.names = append(b.names, l.Name)
		b.executionIDs = append(b.executionIDs, l.ExecutionID)
		b.tokens = append(b.tokens, int64(l.Token))
	}
	return b
}

func (b batch) empty() bool { return len(b.names) == 0 }
