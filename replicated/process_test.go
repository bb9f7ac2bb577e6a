package replicated

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Tests that need a node to die with its process run it in a child: the
// test binary started again with helperEnv naming what the child does. The
// child prints one line on stdout when it is ready, then waits until its
// stdin closes or it is killed.
const helperEnv = "REPLICATED_TEST_HELPER"

// The child's inputs.
const (
	helperDirs  = "REPLICATED_TEST_DIRS"  // the nodes' directories, comma-separated
	helperBinds = "REPLICATED_TEST_BINDS" // the nodes' TCP addresses, comma-separated
	helperTTL   = "REPLICATED_TEST_TTL"   // the TTL of the lease the cluster child grants
	helperAcks  = "REPLICATED_TEST_ACKS"  // the file the solo child appends acknowledged leases to
)

// TestHelperProcess is the child's body; in an ordinary run, without
// helperEnv, it does nothing.
func TestHelperProcess(t *testing.T) {
	switch mode := os.Getenv(helperEnv); mode {
	case "":
		return
	case "hold":
		helperHold(t)
	case "cluster":
		helperCluster(t)
	case "solo":
		helperSolo(t)
	case "truncate":
		helperTruncate(t)
	case "defaults":
		helperDefaults(t)
	default:
		t.Fatalf("unknown helper %q", mode)
	}
}

// helperHold opens one node on its directory and holds it open.
func helperHold(t *testing.T) {
	dir, bind := os.Getenv(helperDirs), os.Getenv(helperBinds)
	n, err := Open(context.Background(), singleConfig(dir, bind))
	require.NoError(t, err)
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	require.NoError(t, n.Close())
}

// helperTruncate opens the log of the node in its directory, as raft does
// on a follower whose uncommitted entries a new leader overwrites: it
// deletes the log's last two entries and writes them again. It then waits
// to be killed, the log left open.
func helperTruncate(t *testing.T) {
	w, err := openWAL(filepath.Join(os.Getenv(helperDirs), walDir), hclog.NewNullLogger())
	require.NoError(t, err)
	last, err := w.LastIndex()
	require.NoError(t, err)
	require.Greater(t, last, uint64(2))
	var again []*raft.Log
	for i := last - 1; i <= last; i++ {
		l := new(raft.Log)
		require.NoError(t, w.GetLog(i, l))
		again = append(again, l)
	}
	require.NoError(t, w.DeleteRange(last-1, last))
	require.NoError(t, w.StoreLogs(again))
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// helperDefaults runs one node configured with no Raft (raft's defaults
// and the node's own logger on stderr) until it has committed a write.
func helperDefaults(t *testing.T) {
	cfg := singleConfig(os.Getenv(helperDirs), os.Getenv(helperBinds))
	cfg.Raft = nil
	ctx := context.Background()
	n, err := Open(ctx, cfg)
	require.NoError(t, err)
	require.NoError(t, n.Ready(ctx))
	_, err = n.Grant(ctx, "h", lease.Operation, time.Minute)
	require.NoError(t, err)
	require.NoError(t, n.Close())
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// heldLease is what the cluster child reports of the lease it granted.
type heldLease struct {
	ID        lease.ID
	Key       string
	ExpiresAt time.Time
}

// helperCluster runs a three-node cluster (TCP, bolt) on the given
// directories and addresses, grants one lease with a key, and reports it.
func helperCluster(t *testing.T) {
	ttl, err := time.ParseDuration(os.Getenv(helperTTL))
	require.NoError(t, err)
	c := newCluster(t, clusterOpts{
		stores: boltStores, transport: tcpTransport, raft: patientRaft,
		dirs: strings.Split(os.Getenv(helperDirs), ","), binds: strings.Split(os.Getenv(helperBinds), ","),
	})
	l, err := c.nodes[c.leader()].GrantWithKey(ctxT(t), "h", lease.Operation, ttl, "k", []byte("v"))
	require.NoError(t, err)
	line, err := json.Marshal(heldLease{ID: l.ID, Key: l.Keys[0], ExpiresAt: l.ExpiresAt})
	require.NoError(t, err)
	os.Stdout.Write(append(line, '\n'))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// singleConfig is a one-node cluster on dir and bind.
func singleConfig(dir, bind string) Config {
	return Config{ID: "solo", Dir: dir, Bind: bind, Insecure: true, Bootstrap: []Server{{ID: "solo", Address: bind}}, Raft: testRaftConfig()}
}

// child is a running helper process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
	done   sync.Once
}

// startChild starts a helper process in mode with the extra environment
// env, and kills it when the test ends if it still runs.
func startChild(t *testing.T, mode string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	c := &child{cmd: cmd, lines: make(chan string, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	var err error
	c.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	read := make(chan struct{})
	go func() {
		defer close(read)
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			c.lines <- s.Text()
		}
		close(c.lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		c.kill()
		<-read
	})
	return c
}

// ready waits for the child's line.
func (c *child) ready(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.kill()
			t.Fatalf("the child ended without a word; its stderr:\n%s", c.stderr.String())
		}
		return line
	case <-time.After(waitLimit):
		c.kill()
		t.Fatalf("the child did not get ready; its stderr:\n%s", c.stderr.String())
		return ""
	}
}

// kill ends the child with SIGKILL and waits for it.
func (c *child) kill() {
	c.done.Do(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		_ = c.stdin.Close()
	})
}

// lockedBuffer is a bytes.Buffer safe for the copying goroutine of
// exec.Cmd and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
