package sqlitecompare

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// childEnv names the queue, file and synchronous setting a child process
// enqueues to, separated by tabs; it is set only in a child.
const childEnv = "SQLITECOMPARE_ENQUEUER"

// ServeChild makes the process an enqueuer of a cross-process pickup
// measurement if it was started as one by Measure, and then exits;
// otherwise it returns at once. A program (or test binary) that calls
// Measure must call it first thing in main (or TestMain), before parsing
// flags: Measure starts the running executable again as the other process.
//
// The enqueuer opens the queue on the file, writes "ready", and then for
// each line it reads enqueues one item and writes the wall-clock time, in
// Unix nanoseconds, at which it began. It stops at the end of its input.
func ServeChild() {
	v, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	if err := serveChild(v, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sqlitecompare enqueuer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveChild(spec string, in io.Reader, out io.Writer) (err error) {
	f := strings.Split(spec, "\t")
	if len(f) != 3 {
		return fmt.Errorf("bad %s %q", childEnv, spec)
	}
	q, ok := queueByName(f[0])
	if !ok {
		return fmt.Errorf("no queue named %q", f[0])
	}
	ctx := context.Background()
	sys, err := q.Open(ctx, f[1], Sync(f[2]))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sys.Stop(ctx)) }()
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "ready")
	if err := w.Flush(); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		t0 := time.Now().UnixNano()
		if err := sys.EnqueueOne(ctx); err != nil {
			return err
		}
		fmt.Fprintln(w, t0)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// childProcess is a running enqueuer (see ServeChild).
type childProcess struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string // the child's output, closed at its end
}

// startChild starts this executable as an enqueuer of queue on the file
// at path, and waits until it has opened the file.
func startChild(ctx context.Context, queue, path string, sync Sync) (*childProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+queue+"\t"+path+"\t"+string(sync))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &childProcess{cmd: cmd, in: in, lines: make(chan string, 1)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	line, err := c.next(ctx, time.Minute)
	if err == nil && line != "ready" {
		err = fmt.Errorf("enqueuer said %q", line)
	}
	if err != nil {
		return nil, errors.Join(err, c.close())
	}
	return c, nil
}

// next returns the child's next line of output.
func (c *childProcess) next(ctx context.Context, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case line, ok := <-c.lines:
		if !ok {
			return "", errors.New("the enqueuer ended")
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-t.C:
		return "", fmt.Errorf("the enqueuer did not answer within %s", timeout)
	}
}

// enqueue has the child enqueue one item and returns when it began.
func (c *childProcess) enqueue(ctx context.Context, timeout time.Duration) (time.Time, error) {
	if _, err := io.WriteString(c.in, "\n"); err != nil {
		return time.Time{}, err
	}
	line, err := c.next(ctx, timeout)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(line, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("enqueuer said %q", line)
	}
	return time.Unix(0, ns), nil
}

// close ends the child's input and waits for it to exit, killing it if it
// has not within a minute.
func (c *childProcess) close() error {
	_ = c.in.Close()
	c.cmd.WaitDelay = time.Second
	timer := time.AfterFunc(time.Minute, func() { _ = c.cmd.Process.Kill() })
	defer timer.Stop()
	err := c.cmd.Wait()
	for range c.lines { // drain, so that the reader ends
	}
	return err
}
