package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The fault tests run real processes on a real file: the test binary
// started again with childEnv naming the part it plays, its arguments in
// childArgs, fields separated by "|". A child reports what it did as lines
// on its stdout, which the parent reads.
const (
	childEnv  = "LEASE_SQLITE_CHILD"
	childArgs = "LEASE_SQLITE_CHILD_ARGS"
)

// children are the parts a child process can play.
var children = map[string]func(args []string) error{}

// runChild runs the child process's part when the test binary was started
// as one, and reports whether it was; the process then exits.
func runChild() bool {
	role := os.Getenv(childEnv)
	if role == "" {
		return false
	}
	run, ok := children[role]
	if !ok {
		fmt.Fprintln(os.Stderr, "no child part", role)
		os.Exit(2)
	}
	if err := run(strings.Split(os.Getenv(childArgs), "|")); err != nil {
		fmt.Fprintln(os.Stderr, role+":", err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	lines chan string // its stdout, line by line; closed at its end
	done  chan error  // its exit, once
}

// startChild starts the test binary as the child role with args.
func startChild(t *testing.T, role string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role, childArgs+"="+strings.Join(args, "|"))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, lines: make(chan string, 1024), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() { c.kill() })
	return c
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	for range c.lines {
	}
	select {
	case err := <-c.done:
		c.done <- err
	default:
	}
}

// expect waits for a line with prefix and returns the rest of it.
func (c *child) expect(t *testing.T, prefix string, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("child ended before saying %q", prefix)
			}
			if rest, found := strings.CutPrefix(l, prefix); found {
				return rest
			}
		case <-deadline:
			t.Fatalf("child did not say %q within %v", prefix, within)
		}
	}
}

// wait waits for the child to exit, and fails if it did not exit 0.
func (c *child) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		require.NoError(t, err, "child exit")
	case <-time.After(within):
		t.Fatalf("child did not exit within %v", within)
	}
}

// say prints a line for the parent.
func say(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
}

// childContext is the context of a child's calls: it ends when the parent
// dies (stdin is closed by then) or after a minute.
func childContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

// fmtSscan parses the space-separated integers of s.
func fmtSscan(s string, dst ...*int64) (int, error) {
	return fmt.Sscan(s, anys(dst)...)
}

func anys(p []*int64) []any {
	out := make([]any, len(p))
	for i := range p {
		out[i] = p[i]
	}
	return out
}
