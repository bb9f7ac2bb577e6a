//go:build race

package sqlclaim

// raceSlowdown scales waits that cover how long goroutines take to run:
// the race detector slows them down about tenfold.
const raceSlowdown = 10
