//go:build linux && (amd64 || arm64 || loong64 || ppc64le || riscv64 || s390x)

package lease

import (
	"context"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestGrantRefusesHolderTooLong checks that a holder longer than an entry
// can keep is refused rather than cut short. The holder is address space
// reserved but never touched: only its length is read.
func TestGrantRefusesHolderTooLong(t *testing.T) {
	n := uint64(maxHolderLen) + 1
	mem, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_NORESERVE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(mem)) }()
	s := Must(New())
	defer s.Close()
	_, err = s.Grant(context.Background(), unsafe.String(&mem[0], n), Operation, time.Minute)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.Zero(t, s.ActiveCount())
}
