package lease

import (
	"strings"

	"github.com/google/btree"
)

// keySpace is the service's ordered key-value store. Keys live in one btree;
// a second btree indexes (lease, key) pairs so that a lease's keys are one
// ordered range scan away, already sorted, and deleting them all is
// O(k log n).
type keySpace struct {
	kv      *btree.BTreeG[kvItem]
	byLease *btree.BTreeG[attachment]
}

type kvItem struct {
	key   string
	value []byte
	lease ID
}

type attachment struct {
	lease ID
	key   string
}

const btreeDegree = 32

func newKeySpace() keySpace {
	return keySpace{
		kv: btree.NewG(btreeDegree, func(a, b kvItem) bool { return a.key < b.key }),
		byLease: btree.NewG(btreeDegree, func(a, b attachment) bool {
			return a.lease < b.lease || (a.lease == b.lease && a.key < b.key)
		}),
	}
}

func (k *keySpace) get(key string) (kvItem, bool) {
	return k.kv.Get(kvItem{key: key})
}

// put stores key, attached to lease (0 for none), and returns the lease the
// key was attached to before (0 for none or a new key).
func (k *keySpace) put(key string, value []byte, lease ID) (prev ID) {
	old, found := k.kv.ReplaceOrInsert(kvItem{key: key, value: value, lease: lease})
	if found && old.lease != 0 && old.lease != lease {
		k.byLease.Delete(attachment{old.lease, key})
	}
	if lease != 0 {
		k.byLease.ReplaceOrInsert(attachment{lease, key})
	}
	if found {
		return old.lease
	}
	return 0
}

// delete removes key and reports what it held.
func (k *keySpace) delete(key string) (kvItem, bool) {
	old, found := k.kv.Delete(kvItem{key: key})
	if found && old.lease != 0 {
		k.byLease.Delete(attachment{old.lease, key})
	}
	return old, found
}

// keysOf returns the keys attached to lease, sorted.
func (k *keySpace) keysOf(lease ID, n int) []string {
	keys := make([]string, 0, n)
	k.byLease.AscendRange(attachment{lease: lease}, attachment{lease: lease + 1}, func(a attachment) bool {
		keys = append(keys, a.key)
		return true
	})
	return keys
}

// deleteLease deletes every key attached to lease and, if collect is set,
// returns them, sorted. Leases mostly end in the order they were granted,
// so the lease's keys are usually the first of the index: they are then
// taken from its left edge, without a search.
func (k *keySpace) deleteLease(lease ID, n int, collect bool) []string {
	var keys []string
	if collect {
		keys = make([]string, 0, n)
	}
	for range n {
		a, ok := k.byLease.Min()
		if ok && a.lease == lease {
			k.byLease.DeleteMin()
		} else if a, ok = k.firstOf(lease); ok {
			k.byLease.Delete(a)
		} else {
			break
		}
		k.kv.Delete(kvItem{key: a.key})
		if collect {
			keys = append(keys, a.key)
		}
	}
	return keys
}

// firstOf returns the first attachment of lease.
func (k *keySpace) firstOf(lease ID) (first attachment, found bool) {
	k.byLease.AscendGreaterOrEqual(attachment{lease: lease}, func(a attachment) bool {
		first, found = a, a.lease == lease
		return false
	})
	return first, found
}

// scan returns copies of the keys starting with prefix, in key order, at most
// limit of them when limit > 0.
func (k *keySpace) scan(prefix string, limit int) []KeyValue {
	var out []KeyValue
	k.kv.AscendGreaterOrEqual(kvItem{key: prefix}, func(it kvItem) bool {
		if !strings.HasPrefix(it.key, prefix) {
			return false
		}
		out = append(out, KeyValue{Key: it.key, Value: cloneBytes(it.value), LeaseID: it.lease})
		return limit <= 0 || len(out) < limit
	})
	return out
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
