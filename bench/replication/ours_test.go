package replication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Leases of the replicated service due together end on the leader soon
// after their deadline, each seen once by OnEnd.
func TestRunOursDueTogether(t *testing.T) {
	rep, err := Run(context.Background(), tiny("ours", "due-together"))
	require.NoError(t, err)
	require.Len(t, rep.Results, 2)
	drain, spread := rep.Results[0], rep.Results[1]
	assert.Equal(t, "ours", drain.Target)
	assert.Equal(t, "drain ms", drain.Metric)
	assert.Equal(t, "deadline spread ms", spread.Metric)
	assert.GreaterOrEqual(t, drain.Median, 0.0, "a lease ended before its deadline")
	assert.Less(t, drain.Median, 2000.0)
	assert.GreaterOrEqual(t, spread.Median, 0.0)
}
