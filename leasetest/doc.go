// Package leasetest provides a deterministic fake clock for testing code
// built on package lease, and helpers shared by the conformance suites of
// the packages built on it.
package leasetest
