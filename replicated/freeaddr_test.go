package replicated

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The nodes of a test cluster each get an address from freeAddr; a repeated
// address makes bootstrap refuse the configuration.
func TestFreeAddrNeverRepeats(t *testing.T) {
	seen := make(map[string]bool)
	for range 500 {
		addr := freeAddr(t)
		require.False(t, seen[addr], "address %s handed out twice", addr)
		seen[addr] = true
	}
}
