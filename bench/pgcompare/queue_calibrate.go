package pgcompare

import (
	"crypto/sha256"
	"math/rand/v2"
	"runtime"
	"time"
)

// The machine's speed changes under a benchmark: a virtual machine shares
// its host's cores and memory with others, whose load the guest cannot
// see. calibrate times two fixed pieces of work, one bound by the core
// (hashing) and one by memory latency (a walk of random pointers through
// a buffer larger than the caches), each the fastest of three tries. The
// CPU probe runs it beside every burn-down, so that a round whose CPU per
// item rose can be told apart: by a slower machine (the fixed work slows
// too) or by the code (it does not).

const (
	calibrateHash  = 4 << 20  // bytes hashed
	calibrateWalk  = 32 << 20 // bytes of the pointer walk's buffer
	calibrateSteps = 1 << 18  // pointers followed
)

// walkBuf is the pointer walk's buffer, one cycle through every slot in
// random order, and hashed the bytes hashed: both made once.
var (
	walkBuf []uint32
	hashed  []byte
)

// calibration is the time of the two fixed pieces of work.
type calibration struct{ hash, walk time.Duration }

func calibrate() calibration {
	if walkBuf == nil {
		// Sattolo's shuffle of the identity: a single cycle, so the
		// walk visits every slot before it comes back.
		walkBuf = make([]uint32, calibrateWalk/4)
		for i := range walkBuf {
			walkBuf[i] = uint32(i)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := len(walkBuf) - 1; i > 0; i-- {
			j := rng.IntN(i)
			walkBuf[i], walkBuf[j] = walkBuf[j], walkBuf[i]
		}
		hashed = make([]byte, calibrateHash)
	}
	c := calibration{hash: time.Hour, walk: time.Hour}
	var sink uint32
	for range 3 {
		t := time.Now()
		sum := sha256.Sum256(hashed)
		c.hash = min(c.hash, time.Since(t))
		sink += uint32(sum[0])

		t = time.Now()
		j := uint32(0)
		for range calibrateSteps {
			j = walkBuf[j]
		}
		c.walk = min(c.walk, time.Since(t))
		sink += j
	}
	runtime.KeepAlive(sink) // the work is not dropped as unused
	return c
}
