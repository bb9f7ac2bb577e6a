package replicated

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// soloConfig is the documented embedded setup: one node, its own cluster,
// on an in-memory transport (no network at all), with its state in dir.
func soloConfig(dir string) (Config, *raft.InmemTransport) {
	_, tr := raft.NewInmemTransport("solo")
	return Config{ID: "solo", Dir: dir, Transport: tr, Bootstrap: []Server{{ID: "solo", Address: "solo"}}, Raft: testRaftConfig()}, tr
}

// helperSolo opens a single-node service on its directory and grants
// leases with keys from several goroutines until it is killed, appending
// each acknowledged lease to the acks file as a JSON line.
func helperSolo(t *testing.T) {
	cfg, tr := soloConfig(os.Getenv(helperDirs))
	n, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	defer func() { _ = n.Close(); _ = tr.Close() }()
	require.NoError(t, n.Ready(context.Background()))
	acks, err := os.OpenFile(os.Getenv(helperAcks), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	require.NoError(t, err)
	var mu sync.Mutex
	os.Stdout.WriteString("ready\n")
	ctx := context.Background()
	for g := range 4 {
		go func() {
			for i := 0; ; i++ {
				ttl := time.Minute
				if i%2 == 0 {
					ttl = 300 * time.Millisecond // expires while the process is down
				}
				key := fmt.Sprintf("g%d/%d", g, i)
				l, err := n.GrantWithKey(ctx, "solo", lease.Operation, ttl, key, []byte(key))
				if err != nil {
					continue
				}
				line, _ := json.Marshal(heldLease{ID: l.ID, Key: key, ExpiresAt: l.ExpiresAt})
				mu.Lock()
				_, _ = acks.Write(append(line, '\n')) // one write: whole lines survive the kill
				mu.Unlock()
			}
		}()
	}
	select {} // until killed
}

// A single-node cluster keeps its leases and keys across a kill -9 of its
// process in the middle of writes: reopened from its directory, it has
// every acknowledged lease with the expiry it was acknowledged with, and
// the leases whose expiry passed while it was down are gone with their
// keys, none extended.
func TestSoloSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	acksPath := filepath.Join(t.TempDir(), "acks.jsonl")
	child := startChild(t, "solo", helperDirs+"="+dir, helperAcks+"="+acksPath)
	child.ready(t)
	require.Eventually(t, func() bool { return len(readAcks(t, acksPath)) >= 200 }, waitLimit, 5*time.Millisecond)
	child.kill() // SIGKILL, with writes under way
	acked := readAcks(t, acksPath)
	// Some of the leases have 300 ms: wait, on the wall clock the log's
	// time comes from, until the first of them is past its expiry, so that
	// the reopened node has at least one lease to end.
	first := acked[0].ExpiresAt
	for _, a := range acked {
		if a.ExpiresAt.Before(first) {
			first = a.ExpiresAt
		}
	}
	require.Eventually(t, func() bool { return time.Now().After(first) }, waitLimit, 5*time.Millisecond)

	cfg, tr := soloConfig(dir)
	n, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()); require.NoError(t, tr.Close()) }()
	ctx := ctxT(t)
	require.NoError(t, n.Ready(ctx))
	var live, ended int
	for _, a := range acked {
		got, err := n.Info(ctx, a.ID) // linearizable: settles what expired meanwhile
		_, _, ok, gerr := n.Get(ctx, a.Key)
		require.NoError(t, gerr)
		if time.Now().Before(a.ExpiresAt) {
			require.NoError(t, err, "lease %d is lost", a.ID)
			require.True(t, a.ExpiresAt.Equal(got.ExpiresAt), "lease %d: acknowledged expiry %v, now %v", a.ID, a.ExpiresAt, got.ExpiresAt)
			require.True(t, ok, "key %s is lost", a.Key)
			live++
			continue
		}
		if err == nil { // it may have ended only just now, after the check above
			require.True(t, a.ExpiresAt.Equal(got.ExpiresAt), "lease %d was extended", a.ID)
			continue
		}
		require.ErrorIs(t, err, lease.ErrExpired, "lease %d", a.ID)
		require.False(t, ok, "the key %s of an expired lease is gone", a.Key)
		ended++
	}
	t.Logf("%d acknowledged: %d live, %d expired while down", len(acked), live, ended)
	require.NotZero(t, live)
	require.NotZero(t, ended)
}

// readAcks reads the whole lines of the acks file.
func readAcks(t *testing.T, path string) []heldLease {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []heldLease
	s := bufio.NewScanner(f)
	for s.Scan() {
		var h heldLease
		if line := s.Text(); strings.HasSuffix(line, "}") && json.Unmarshal([]byte(line), &h) == nil {
			out = append(out, h)
		}
	}
	return out
}
