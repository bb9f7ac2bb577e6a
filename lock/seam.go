package lock

import "github.com/leasehold/lease/lock/lockprovider"

// The names below are package lockprovider's, the lock-provider seam,
// under the names users write: a lease, a holding and a provider are one
// type whichever package names them. A provider implementation imports
// lockprovider (its optional capabilities are there, and only there); a
// program taking locks needs only this package.

// Provider stores locks; see [lockprovider.Provider].
type Provider = lockprovider.Provider

// Lease is one holding of a named lock; see [lockprovider.Lease].
type Lease = lockprovider.Lease

// Holding is who holds a lock, as an inspecting provider reports it; see
// [lockprovider.Holding].
type Holding = lockprovider.Holding

// Waiting is one caller waiting for a lock; see [lockprovider.Waiting].
type Waiting = lockprovider.Waiting

// MaxValueSize is the largest value a holder may attach to a holding
// (WithValue); see [lockprovider.MaxValueSize].
const MaxValueSize = lockprovider.MaxValueSize
