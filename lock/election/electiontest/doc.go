// Package electiontest checks that leader elections keep their promises on
// a lock provider, in the manner of package locktest: a provider's own
// tests call [TestElection] with a factory, and every clause runs as a
// subtest on a fresh provider.
//
// The clauses: a campaign blocks while another candidate leads, resigning
// hands over at once, Leader and Observe report the leader's value and
// each change in order, a leader whose lease runs out loses its
// leadership, there is never more than one leader, a leader whose renewals
// fail stops leading, cancelling a leader's context lets another take over
// at once, followers hear of new leaders, and bad configuration is
// refused.
package electiontest
