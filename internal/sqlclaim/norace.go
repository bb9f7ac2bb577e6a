//go:build !race

package sqlclaim

// raceSlowdown scales waits that cover how long goroutines take to run:
// 1 without the race detector.
const raceSlowdown = 1
