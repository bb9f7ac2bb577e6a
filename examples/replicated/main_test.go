package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// A peer's HTTP address is given, or its raft port shifted as this node's.
func TestParseFlagsPeersHTTP(t *testing.T) {
	cfg, err := parseFlags([]string{"-id", "n1", "-raft", "127.0.0.1:7001", "-http", "127.0.0.1:8001", "-dir", "d",
		"-peers", "n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=10.0.0.3:7003", "-peers-http", "n2=127.0.0.1:9999", "-insecure"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"n1": "127.0.0.1:8001", "n2": "127.0.0.1:9999", "n3": "10.0.0.3:8003"}, cfg.peersHTTP)
	assert.Equal(t, "d", cfg.dir)
	require.Len(t, cfg.peers, 3)
	assert.Equal(t, "10.0.0.3:7003", cfg.peers[2].Address)
}

func TestParseFlagsRejects(t *testing.T) {
	good := []string{"-id", "n1", "-raft", "127.0.0.1:7001", "-http", "127.0.0.1:8001", "-dir", "d", "-peers", "n1=127.0.0.1:7001,n2=127.0.0.1:7002", "-insecure"}
	_, err := parseFlags(good, io.Discard)
	require.NoError(t, err)
	for field, args := range map[string][]string{
		"id":         {"-raft", "127.0.0.1:7001", "-http", "127.0.0.1:8001", "-dir", "d", "-peers", "n1=127.0.0.1:7001", "-insecure"},
		"http":       {"-id", "n1", "-raft", "127.0.0.1:7001", "-http", "8001", "-dir", "d", "-peers", "n1=127.0.0.1:7001", "-insecure"},
		"peers":      {"-id", "n1", "-raft", "127.0.0.1:7001", "-http", "127.0.0.1:8001", "-dir", "d", "-peers", "n2=127.0.0.1:7002", "-insecure"},
		"tls-ca":     good[:len(good)-1],
		"tls-cert":   append(good[:len(good)-1:len(good)-1], "-tls-ca", "ca.pem"),
		"insecure":   append(good[:len(good):len(good)], "-tls-ca", "ca.pem"),
		"peers-http": append(good[:len(good):len(good)], "-peers-http", "n2"),
		"args":       append(good[:len(good):len(good)], "extra"),
	} {
		_, err := parseFlags(args, io.Discard)
		var le *lease.Error
		require.ErrorAs(t, err, &le, field)
		assert.Equal(t, lease.CodeInvalidArgument, le.Code, field)
		assert.Equal(t, field, le.Field)
	}
	_, err = parseFlags([]string{"-peers", "n1=127.0.0.1:7001,n1=127.0.0.1:7002", "-id", "n1", "-raft", "127.0.0.1:7001", "-http", "127.0.0.1:8001", "-dir", "d", "-insecure"}, io.Discard)
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
}
