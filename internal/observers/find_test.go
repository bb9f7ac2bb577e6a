package observers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// marked is an observer with an optional interface, Mark.
type marked string

func (marked) Observe(int)    {}
func (m marked) Mark() string { return string(m) }

type marker interface{ Mark() string }

// TestFindSearchesJoinedObserversInDepth: an observer with the interface is
// found alone; among joined ones, every one that has it, in order, joins
// within joins included; an observer without it gives nothing.
func TestFindSearchesJoinedObserversInDepth(t *testing.T) {
	plain := lease.ObserverFunc[int](func(int) {})
	assert.Equal(t, []marker{marked("a")}, Find[marker](lease.Observer[int](marked("a"))))
	assert.Nil(t, Find[marker](lease.Observer[int](plain)))
	joined := lease.Observers[int](marked("a"), plain, lease.Observers[int](plain, marked("b")), marked("c"))
	assert.Equal(t, []marker{marked("a"), marked("b"), marked("c")}, Find[marker](joined))
	assert.Nil(t, Find[marker](lease.Observers[int](plain, plain)))
}
