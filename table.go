package lease

import "github.com/leasehold/lease/internal/idtable"

// leaseTable maps IDs to entries: the live leases and the remembered ended
// ones. IDs are issued densely in increasing order, so idtable keeps most
// entries in chunks of consecutive IDs (a lookup is one small map probe and
// one slot), and moves the survivors of a thinned-out chunk to a map, so
// memory follows the leases held, not the IDs ever issued.
type leaseTable struct{ t idtable.Table[entry] }

func newLeaseTable() leaseTable { return leaseTable{} }

func (t *leaseTable) get(id ID) *entry { return t.t.Get(uint64(id)) }

func (t *leaseTable) put(e *entry) { t.t.Put(uint64(e.id), e) }

func (t *leaseTable) delete(id ID) { t.t.Delete(uint64(id)) }
