package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// tiny is a configuration small enough for CI: one short run, few clients
// and few leases.
func tiny(target, scenario string) Config {
	return Config{
		Targets:      []string{target},
		Scenarios:    []string{scenario},
		Runs:         1,
		Duration:     300 * time.Millisecond,
		Clients:      4,
		ExpiryLeases: 10,
		DueLeases:    20,
		DueTTL:       3 * time.Second,
	}
}

// A real 3-member etcd cluster grants and revokes.
func TestRunEtcdGrantRevoke(t *testing.T) {
	var progress bytes.Buffer
	cfg := tiny("etcd", "grant-revoke")
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	assert.Equal(t, "etcd", r.Target)
	assert.Equal(t, "grant+revoke", r.Scenario)
	assert.Equal(t, "pairs/s", r.Metric)
	require.Len(t, r.Runs, 1)
	assert.Equal(t, r.Runs[0], r.Median)
	assert.Greater(t, r.Median, 1.0, "4 clients for 300 ms must complete some pairs")
	assert.Less(t, r.Median, 1e6)
	assert.Contains(t, progress.String(), "etcd grant-revoke run 1/1")

	var md, js bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md, "go run ./cmd/replication"))
	assert.Contains(t, md.String(), "| etcd | grant+revoke | pairs/s | ")
	require.NoError(t, rep.WriteJSON(&js))
	var back Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, rep.Results, back.Results)
}

func TestConfigRejects(t *testing.T) {
	good := tiny("etcd", "renew")
	for field, mutate := range map[string]func(*Config){
		"Targets":      func(c *Config) { c.Targets = []string{"consul"} },
		"Scenarios":    func(c *Config) { c.Scenarios = []string{"nap"} },
		"Runs":         func(c *Config) { c.Runs = 0 },
		"Duration":     func(c *Config) { c.Duration = 0 },
		"Clients":      func(c *Config) { c.Clients = 0 },
		"ExpiryLeases": func(c *Config) { c.ExpiryLeases = 0 },
		"DueLeases":    func(c *Config) { c.DueLeases = 0 },
		"DueTTL":       func(c *Config) { c.DueTTL = time.Second },
	} {
		cfg := good
		mutate(&cfg)
		_, err := Run(context.Background(), cfg)
		var le *lease.Error
		require.ErrorAs(t, err, &le, field)
		assert.Equal(t, lease.CodeInvalidArgument, le.Code, field)
		assert.Equal(t, field, le.Field)
	}
}

func TestMedianPercentileFormat(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	assert.Equal(t, 0.0, median(nil))
	sorted := make([]float64, 100)
	for i := range sorted {
		sorted[i] = float64(i + 1)
	}
	assert.Equal(t, 51.0, percentile(sorted, 0.5))
	assert.Equal(t, 99.0, percentile(sorted, 0.99))
	assert.Equal(t, 0.0, percentile(nil, 0.5))
	assert.Equal(t, "1,234,568", format(1234567.8))
	assert.Equal(t, "-1,500", format(-1500))
	assert.Equal(t, "9.5", format(9.46))
	assert.Equal(t, "100", format(100))
}
