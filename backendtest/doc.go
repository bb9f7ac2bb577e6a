// Package backendtest checks that a lease.Backend keeps the lease contract,
// in the manner of testing/fstest.TestFS: a backend's own tests call
// [TestBackend] with a factory, and every clause runs as a subtest on a
// fresh backend. The same clauses run on a Service in this process (on a
// fake clock) and on a replicated node, so code
// written against lease.Backend can count on the same answers from both.
package backendtest
