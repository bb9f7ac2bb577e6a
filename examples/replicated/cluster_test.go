package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Three node processes on mutual TLS; a lease with a key is granted
// through a follower, which forwards the call to the leader; the leader is killed with SIGKILL; the new
// leader still has the lease, its key and its deadline, and the key goes
// once the lease expires, not before.
func TestClusterSurvivesTheLeadersDeath(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "replicated")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	nodes := startCluster(t, bin, 3)
	leader := waitLeader(t, nodes, "")
	var follower *node
	for _, n := range nodes {
		if n != leader {
			follower = n
			break
		}
	}

	// A follower serves a write: it forwards it to the leader.
	body := `{"holder":"alice","ttl":"8s","key":"jobs/1","value":"hello"}`
	resp, raw := post(t, "http://"+follower.http+"/grant", body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var granted leaseJSON
	require.NoError(t, json.Unmarshal(raw, &granted))
	require.Equal(t, []string{"jobs/1"}, granted.Keys)

	leader.kill(t)
	next := waitLeader(t, nodes, leader.id)
	require.True(t, time.Now().Before(granted.ExpiresAt), "the failover outlasted the lease: raise its TTL")

	resp, raw = get(t, "http://"+next.http+"/info?id="+strconv.FormatUint(uint64(granted.ID), 10))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var info leaseJSON
	require.NoError(t, json.Unmarshal(raw, &info))
	assert.Equal(t, granted.ID, info.ID)
	assert.Equal(t, "alice", info.Holder)
	assert.True(t, granted.ExpiresAt.Equal(info.ExpiresAt), "deadline %v, now %v", granted.ExpiresAt, info.ExpiresAt)
	assert.Equal(t, []string{"jobs/1"}, info.Keys)

	// The key is there until the deadline, and gone shortly after.
	const shortly = time.Second
	url := "http://" + next.http + "/get?key=jobs/1"
	var seen bool
	poll(t, time.Until(granted.ExpiresAt)+shortly, "the key to go", func() bool {
		sent := time.Now()
		resp, raw := get(t, url)
		received := time.Now()
		switch resp.StatusCode {
		case http.StatusOK:
			var kv struct {
				Value   string   `json:"value"`
				LeaseID lease.ID `json:"lease_id"`
			}
			require.NoError(t, json.Unmarshal(raw, &kv))
			require.Equal(t, "hello", kv.Value)
			require.Equal(t, granted.ID, kv.LeaseID)
			seen = true
			return false
		case http.StatusNotFound:
			require.True(t, seen, "the key was gone right after the failover")
			require.False(t, received.Before(granted.ExpiresAt), "the key went %v before its lease's deadline", granted.ExpiresAt.Sub(received))
			t.Logf("the key was gone %v after the deadline (request sent %v after it)", received.Sub(granted.ExpiresAt), sent.Sub(granted.ExpiresAt))
			return true
		default:
			require.Failf(t, "unexpected answer", "%d %s", resp.StatusCode, raw)
			return false
		}
	})
}

// node is one node process of the test's cluster.
type node struct {
	id, raft, http string
	cmd            *exec.Cmd
	out            *syncBuffer
	dead           bool
}

// kill ends the node with SIGKILL, as a crash, and waits for it to exit.
func (n *node) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, n.cmd.Process.Kill())
	_ = n.cmd.Wait() // "signal: killed"
	n.dead = true
}

// startCluster starts size node processes of bin on free ports of
// 127.0.0.1, each with a data directory of its own. They are killed when
// the test ends, and their output logged if it failed.
func startCluster(t *testing.T, bin string, size int) []*node {
	t.Helper()
	nodes := make([]*node, size)
	pki := writePKI(t, t.TempDir())
	var peers, peersHTTP []string
	for i := range nodes {
		n := &node{id: "n" + strconv.Itoa(i+1), raft: freeAddr(t), http: freeAddr(t), out: &syncBuffer{}}
		nodes[i] = n
		peers = append(peers, n.id+"="+n.raft)
		peersHTTP = append(peersHTTP, n.id+"="+n.http)
	}
	for _, n := range nodes {
		n.cmd = exec.CommandContext(t.Context(), bin,
			"-id", n.id, "-raft", n.raft, "-http", n.http, "-dir", filepath.Join(t.TempDir(), n.id),
			"-peers", strings.Join(peers, ","), "-peers-http", strings.Join(peersHTTP, ","),
			"-tls-ca", pki.ca, "-tls-cert", pki.cert, "-tls-key", pki.key)
		n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
		require.NoError(t, n.cmd.Start())
		t.Cleanup(func() {
			if !n.dead {
				_ = n.cmd.Process.Kill()
				_ = n.cmd.Wait()
			}
			if t.Failed() {
				t.Logf("output of %s:\n%s", n.id, n.out.String())
			}
		})
	}
	return nodes
}

// waitLeader waits until every live node names the same leader, one that
// is not notID and that says it leads, and returns it.
func waitLeader(t *testing.T, nodes []*node, notID string) *node {
	t.Helper()
	var leader *node
	poll(t, 30*time.Second, "a leader", func() bool {
		agreed := ""
		for _, n := range nodes {
			if n.dead {
				continue
			}
			var l struct{ ID, Self string }
			resp, raw, err := tryGet("http://" + n.http + "/leader")
			if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &l) != nil {
				return false // not serving yet
			}
			if l.ID == "" || l.ID == notID || (agreed != "" && l.ID != agreed) {
				return false
			}
			agreed = l.ID
			if l.Self == l.ID {
				leader = n
			}
		}
		return leader != nil && leader.id == agreed
	})
	return leader
}

// poll calls cond every 20 ms until it returns true, and fails the test if
// it has not within d.
func poll(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			require.FailNow(t, "timed out waiting for "+what, "after %v", d)
		}
	}
}

// client does not follow redirects (a node answers every call itself),
// and keeps no connection open.
var client = &http.Client{
	Timeout:       15 * time.Second,
	Transport:     &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func tryGet(url string) (*http.Response, []byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, raw, err := tryGet(url)
	require.NoError(t, err)
	return resp, raw
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, raw
}

// usedAddrs holds every address freeAddr has returned: the kernel often
// gives a just-closed port to the next listener, and two nodes on one port
// would not form a cluster.
var usedAddrs = map[string]bool{}

// freeAddr returns a host:port of 127.0.0.1 that was free a moment ago and
// not returned before. Tests call it from their own goroutine only.
func freeAddr(t *testing.T) string {
	t.Helper()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		if !usedAddrs[addr] {
			usedAddrs[addr] = true
			return addr
		}
	}
}

// syncBuffer is a bytes.Buffer that a process's output and the test may
// use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
