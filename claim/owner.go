package claim

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync"
)

// DefaultOwner returns the owner Work claims with when Worker.Owner is
// empty: "HOST:PID:SUFFIX", this process's host name and ID and a random
// suffix, the same for every call in the process. The suffix keeps it
// unique when a host name and PID recur (containers whose main process is
// always PID 1), so that an item's history (Failure.Owner) says which
// process failed it.
func DefaultOwner() string { return defaultOwner() }

var defaultOwner = sync.OnceValue(func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:]) // never fails: see crypto/rand.Read
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(suffix[:])
})
