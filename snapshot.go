package lease

import (
	"io"
	"time"
)

// Snapshot is a copy of a Service's whole state at one instant: its live
// leases (holder, purpose, TTL, grant and renewal times), its keys and
// values, its revision and ID counters, and the ended leases it remembers.
// Take one with Service.Snapshot, write it with WriteTo, read it back with
// ReadSnapshot, and make a Service of it with Restore. The format is
// versioned and documented in docs/snapshots.md.
//
// A Snapshot is immutable and safe for concurrent use.
type Snapshot struct {
	at int64 // unix nanoseconds
}

// At returns the instant the snapshot was taken, on the service's time base.
func (sn *Snapshot) At() time.Time { return time.Unix(0, sn.at) }

// Len returns the number of live leases in the snapshot.
func (sn *Snapshot) Len() int { panic("unimplemented") }

// WriteTo writes the snapshot to w in the snapshot format and returns the
// number of bytes written. It implements io.WriterTo.
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) { panic("unimplemented") }

// ReadSnapshot reads a snapshot written by WriteTo. Data that is not a
// snapshot, is truncated, fails its checksum or has a version this package
// does not know gets an *Error with CodeInvalidArgument and Field
// "snapshot".
func ReadSnapshot(r io.Reader) (*Snapshot, error) { panic("unimplemented") }

// Snapshot returns the service's state at one instant (the service's time
// when it is called, after everything due has been settled). Keep-alives
// are not part of it. It returns LS_CLOSED after Close.
func (s *Service) Snapshot() (*Snapshot, error) { panic("unimplemented") }

// Restore returns a new Service, configured by opts, holding the state of
// sn. Time spent between the snapshot and the restore counts against every
// lease, but never more than the clock shows and never less than nothing:
// with R the new service's time when Restore is called, a lease that had d
// left at sn.At() expires at the earlier of its recorded expiry and R+d. A
// lease is never given more than the TTL it was granted or renewed for,
// however the clock moved, and none is forgotten: one whose expiry has
// passed is restored and ends, as expired at that expiry, at the first
// settle (its keys deleted, its OnExpire hook called, and Renew answering
// LS_EXPIRED). When R equals sn.At() the state is restored exactly, which is
// what a replica applying a snapshot needs.
func Restore(sn *Snapshot, opts ...Option) (*Service, error) { panic("unimplemented") }
