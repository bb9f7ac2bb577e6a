package claim_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// printOwnerEnv makes TestDefaultOwnerPrinter print the default owner, in
// a process of its own.
const printOwnerEnv = "CLAIM_TEST_PRINT_OWNER"

func TestDefaultOwnerNamesHostAndProcess(t *testing.T) {
	owner := claim.DefaultOwner()
	host, err := os.Hostname()
	require.NoError(t, err)
	assert.Regexp(t, "^"+regexp.QuoteMeta(host)+":"+strconv.Itoa(os.Getpid())+":[0-9a-f]{8}$", owner)
	assert.Equal(t, owner, claim.DefaultOwner(), "the same for the whole process")
}

func TestDefaultOwnerDiffersBetweenProcesses(t *testing.T) {
	others := map[string]bool{}
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultOwnerPrinter$")
		cmd.Env = append(os.Environ(), printOwnerEnv+"=1")
		out, err := cmd.Output()
		require.NoError(t, err)
		line, _, _ := strings.Cut(string(out), "\n")
		require.True(t, strings.HasPrefix(line, "owner="), "output %q", out)
		others[strings.TrimPrefix(line, "owner=")] = true
	}
	assert.Len(t, others, 2)
	assert.NotContains(t, others, claim.DefaultOwner())
}

// TestDefaultOwnerPrinter is the child process of
// TestDefaultOwnerDiffersBetweenProcesses; on its own it checks nothing.
func TestDefaultOwnerPrinter(t *testing.T) {
	if os.Getenv(printOwnerEnv) == "" {
		return
	}
	_, _ = os.Stdout.WriteString("owner=" + claim.DefaultOwner() + "\n")
}

func TestWorkClaimsAsTheDefaultOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(_ context.Context, c claim.Claim) error {
			return claim.Discard(errors.New("owner is " + c.Owner))
		}})
		enqueue(t, b, q, "x")
		synctest.Wait()
		require.NoError(t, stop())
		dead := listDead(t, b, q)
		require.Len(t, dead, 1)
		assert.Equal(t, claim.DefaultOwner(), dead[0].History[0].Owner)
		assert.Equal(t, "claim: discarded: owner is "+claim.DefaultOwner(), dead[0].History[0].Reason)
	})
}
