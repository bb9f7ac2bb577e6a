// Package locktest checks that a lock.Provider keeps the lock contract, in
// the manner of testing/fstest.TestFS: a provider's own tests call
// [TestProvider] with a factory, and every clause of the contract runs as a
// subtest on a fresh provider.
//
// The suite checks histories of concurrent operations for linearizability
// with github.com/anishathalye/porcupine, which is therefore a requirement
// of this module; only test binaries that import locktest link it.
package locktest
