// Package lock provides named exclusive locks with fencing tokens, as
// leases, over a pluggable Provider.
package lock
