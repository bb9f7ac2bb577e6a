package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leasehold/lease/claim"
)

// The environment of a worker process: its name (which makes the program a
// worker), its queue, its lease and its work time. The server is
// LEASE_POSTGRES_DSN.
const (
	workerEnv = "POSTGRES_QUEUE_WORKER"
	queueEnv  = "POSTGRES_QUEUE_NAME"
	leaseEnv  = "POSTGRES_QUEUE_LEASE"
	workEnv   = "POSTGRES_QUEUE_WORK"
	dsnEnv    = "LEASE_POSTGRES_DSN"
)

// workerMain is the program run as a worker process: it works on the queue
// until SIGTERM or SIGINT, writing "done ITEM" to stdout for every item it
// finishes, and returns the exit code.
func workerMain(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := work(ctx, name, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// work runs the worker until ctx is done.
func work(ctx context.Context, name string, out io.Writer) error {
	leaseDuration, err := time.ParseDuration(os.Getenv(leaseEnv))
	if err != nil {
		return err
	}
	workTime, err := time.ParseDuration(os.Getenv(workEnv))
	if err != nil {
		return err
	}
	q, err := openQueue(context.WithoutCancel(ctx), os.Getenv(dsnEnv))
	if err != nil {
		return err
	}
	defer q.close()
	var mu sync.Mutex // one line at a time on out
	return q.broker.Work(ctx, claim.Worker{
		Queue:         os.Getenv(queueEnv),
		Owner:         name,
		Concurrency:   4,
		LeaseDuration: leaseDuration,
		Handler: func(ctx context.Context, c claim.Claim) error {
			select { // the work an item takes: resizing an image, say
			case <-time.After(workTime):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			mu.Lock()
			defer mu.Unlock()
			_, err := fmt.Fprintf(out, "done %s\n", c.Payload)
			return err
		},
	})
}

// finished is a worker's report of an item it finished.
type finished struct {
	worker, item string
}

// workers are the worker processes of a run.
type workers struct {
	procs map[string]*exec.Cmd
	lines chan finished
	read  sync.WaitGroup // the readers of the workers' output
}

// startWorkers starts one worker process per name on queue.
func startWorkers(ctx context.Context, cfg config, queue string, names ...string) (*workers, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ws := &workers{procs: map[string]*exec.Cmd{}, lines: make(chan finished, 2*cfg.items+16)}
	for _, name := range names {
		cmd := exec.CommandContext(ctx, self)
		cmd.Env = append(os.Environ(), workerEnv+"="+name, queueEnv+"="+queue,
			leaseEnv+"="+cfg.lease.String(), workEnv+"="+cfg.work.String(), dsnEnv+"="+cfg.dsn)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			ws.close()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			ws.close()
			return nil, err
		}
		ws.procs[name] = cmd
		ws.read.Go(func() {
			s := bufio.NewScanner(stdout)
			for s.Scan() {
				if item, ok := strings.CutPrefix(s.Text(), "done "); ok {
					ws.lines <- finished{worker: name, item: item}
				}
			}
		})
	}
	return ws, nil
}

// next returns the next item a worker finished.
func (ws *workers) next(ctx context.Context) (finished, error) {
	select {
	case d := <-ws.lines:
		return d, nil
	case <-time.After(waitLimit):
		return finished{}, fmt.Errorf("no worker finished an item within %v", waitLimit)
	case <-ctx.Done():
		return finished{}, ctx.Err()
	}
}

// until records the items the workers finish until done reports true,
// asking it every few milliseconds.
func (ws *workers) until(ctx context.Context, done func() bool, record func(finished)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(waitLimit)
	for {
		select {
		case d := <-ws.lines:
			record(d)
		case <-tick.C:
			if done() {
				return nil
			}
		case <-limit:
			return fmt.Errorf("the queue was not drained within %v", waitLimit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// kill ends a worker with SIGKILL, as a crash, and waits for it.
func (ws *workers) kill(name string) error {
	cmd := ws.procs[name]
	delete(ws.procs, name)
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	_ = cmd.Wait() // "signal: killed"
	return nil
}

// stop ends a worker with SIGTERM, which stops its Work gracefully, and
// waits for it.
func (ws *workers) stop(name string) error {
	cmd := ws.procs[name]
	delete(ws.procs, name)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// rest returns what the workers reported that was not read yet, once every
// worker has ended.
func (ws *workers) rest() []finished {
	ws.read.Wait()
	var out []finished
	for {
		select {
		case d := <-ws.lines:
			out = append(out, d)
		default:
			return out
		}
	}
}

// close kills the workers still running and waits for them and their
// readers.
func (ws *workers) close() {
	for name := range ws.procs {
		_ = ws.kill(name)
	}
	ws.read.Wait()
}
