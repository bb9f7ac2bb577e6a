package lease

import (
	"strings"

	"github.com/google/btree"

	"github.com/leasehold/lease/internal/idtable"
)

// keySpace is the service's ordered key-value store. Keys live in one btree.
// A lease's keys are found through two indexes: first maps each lease with
// keys to the least of them, and more holds the (lease, key) pairs of the
// others, so that a lease's keys are its first one and a range of more,
// already sorted. Most leases have one key: ending such a lease finds it
// with one lookup by ID, where a search of an index of a million (lease,
// key) pairs missed the cache at every level, in random order twice (find,
// then delete).
type keySpace struct {
	kv    *btree.BTreeG[kvItem]
	first idtable.Map[ID, string]
	more  *btree.BTreeG[attachment]
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
		more: btree.NewG(btreeDegree, func(a, b attachment) bool {
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
		k.detach(old.lease, key)
	}
	if lease != 0 && (!found || old.lease != lease) {
		k.attach(lease, key)
	}
	if found {
		return old.lease
	}
	return 0
}

// attach records key, not yet attached to lease, as one of its keys.
func (k *keySpace) attach(lease ID, key string) {
	first, ok := k.first.Get(lease)
	switch {
	case !ok:
		k.first.Set(lease, key)
	case key < first:
		k.more.ReplaceOrInsert(attachment{lease, first})
		k.first.Set(lease, key)
	default:
		k.more.ReplaceOrInsert(attachment{lease, key})
	}
}

// detach forgets key, attached to lease, as one of its keys.
func (k *keySpace) detach(lease ID, key string) {
	if first, ok := k.first.Get(lease); !ok || first != key {
		k.more.Delete(attachment{lease, key})
		return
	}
	// The first key goes: the least of the others takes its place.
	if next, ok := k.firstOf(lease); ok {
		k.more.Delete(next)
		k.first.Set(lease, next.key)
		return
	}
	k.first.Delete(lease)
}

// delete removes key and reports what it held.
func (k *keySpace) delete(key string) (kvItem, bool) {
	old, found := k.kv.Delete(kvItem{key: key})
	if found && old.lease != 0 {
		k.detach(old.lease, key)
	}
	return old, found
}

// keysOf returns the keys attached to lease, sorted.
func (k *keySpace) keysOf(lease ID, n int) []string {
	first, ok := k.first.Get(lease)
	if !ok {
		return nil
	}
	keys := make([]string, 1, n)
	keys[0] = first
	if n > 1 {
		k.more.AscendRange(attachment{lease: lease}, attachment{lease: lease + 1}, func(a attachment) bool {
			keys = append(keys, a.key)
			return true
		})
	}
	return keys
}

// deleteLease deletes every key attached to lease, n of them, and, if
// collect is set, returns them, sorted. Leases mostly end in the order they
// were granted, so the lease's other keys are usually the first of more:
// they are then taken from its left edge, without a search.
func (k *keySpace) deleteLease(lease ID, n int, collect bool) []string {
	var keys []string
	if collect {
		keys = make([]string, 0, n)
	}
	first, ok := k.first.Get(lease)
	if !ok {
		return keys
	}
	k.first.Delete(lease)
	k.kv.Delete(kvItem{key: first})
	if collect {
		keys = append(keys, first)
	}
	for range n - 1 {
		a, ok := k.more.Min()
		if ok && a.lease == lease {
			k.more.DeleteMin()
		} else if a, ok = k.firstOf(lease); ok {
			k.more.Delete(a)
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

// firstOf returns the least attachment of lease in more.
func (k *keySpace) firstOf(lease ID) (first attachment, found bool) {
	k.more.AscendGreaterOrEqual(attachment{lease: lease}, func(a attachment) bool {
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
