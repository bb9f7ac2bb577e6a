package lease

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validSnapshot is a small consistent snapshot that each case below breaks
// in one way.
func validSnapshot() *Snapshot {
	return &Snapshot{
		at:       1_000,
		lastID:   5,
		revision: 9,
		purposes: []string{"operation"},
		live: []snapshotLease{
			{id: 2, holder: "a", ttl: 10, granted: 100, renewed: 100, revision: 2},
			{id: 4, holder: "b", ttl: 10, granted: 100, renewed: 200, revision: 4},
		},
		ended: []snapshotLease{{id: 3, holder: "c", ttl: 10, granted: 100, renewed: 100, state: stateRevoked}},
		keys:  []snapshotKey{{key: "a", lease: 2}, {key: "b", value: []byte{}}, {key: "c", value: []byte("v"), lease: 4}},
	}
}

func TestReadSnapshotRefusesInconsistentState(t *testing.T) {
	cases := map[string]func(sn *Snapshot){
		"negative revision":     func(sn *Snapshot) { sn.revision = -1 },
		"bad purpose name":      func(sn *Snapshot) { sn.purposes[0] = "Not A Name" },
		"ID never issued":       func(sn *Snapshot) { sn.live[1].id = 6 },
		"ID zero":               func(sn *Snapshot) { sn.ended[0].id = 0 },
		"no holder":             func(sn *Snapshot) { sn.live[0].holder = "" },
		"no purpose":            func(sn *Snapshot) { sn.live[0].purpose = 1 },
		"no TTL":                func(sn *Snapshot) { sn.live[0].ttl = 0 },
		"live out of order":     func(sn *Snapshot) { sn.live[0].id, sn.live[1].id = 4, 2 },
		"ended state":           func(sn *Snapshot) { sn.ended[0].state = 7 },
		"ended twice":           func(sn *Snapshot) { sn.ended = append(sn.ended, sn.ended[0]) },
		"ended and live":        func(sn *Snapshot) { sn.ended[0].id = 2 },
		"empty key":             func(sn *Snapshot) { sn.keys[0].key = "" },
		"keys out of order":     func(sn *Snapshot) { sn.keys[0].key = "z" },
		"key on an ended lease": func(sn *Snapshot) { sn.keys[0].lease = 3 },
		"key on no lease":       func(sn *Snapshot) { sn.keys[0].lease = 5 },
	}
	var buf bytes.Buffer
	_, err := validSnapshot().WriteTo(&buf)
	require.NoError(t, err)
	_, err = ReadSnapshot(&buf)
	require.NoError(t, err, "the base case is valid")
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			sn := validSnapshot()
			breakIt(sn)
			buf.Reset()
			_, err := sn.WriteTo(&buf)
			require.NoError(t, err)
			_, err = ReadSnapshot(&buf)
			var le *Error
			require.True(t, errors.As(err, &le), "%v", err)
			assert.Equal(t, CodeInvalidArgument, le.Code)
			assert.Equal(t, "snapshot", le.Field)
		})
	}
}

func TestReadSnapshotRefusesCountsBeyondTheData(t *testing.T) {
	// A count of a billion leases in a few bytes must be refused before
	// anything is allocated for them.
	e := newSnapshotEncoder(nil)
	e.buf = append(e.buf, snapshotMagic...)
	e.uvarint(snapshotVersion)
	e.varint(0)
	e.uvarint(0)
	e.uvarint(0)
	e.uvarint(0)       // purposes
	e.uvarint(1 << 30) // live leases
	var buf bytes.Buffer
	e.w = &buf
	_, err := e.finish()
	require.NoError(t, err)
	_, err = ReadSnapshot(&buf)
	var le *Error
	require.True(t, errors.As(err, &le))
	assert.Contains(t, le.Detail, "exceeds the data")
}
