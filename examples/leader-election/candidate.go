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

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/postgres"
)

// The environment of a candidate process: its name (which makes the
// program a candidate) and its lease. The server is LEASE_POSTGRES_DSN.
const (
	candidateEnv = "LEADER_ELECTION_CANDIDATE"
	leaseEnv     = "LEADER_ELECTION_LEASE"
	dsnEnv       = "LEASE_POSTGRES_DSN"
)

const table = "leader_election_example"

// campaign takes part in the election as name until ctx is done, and
// reports what happens.
func campaign(ctx context.Context, el *election.Election, name string, report func(event)) error {
	err := el.Run(ctx, []byte(name), election.Callbacks{
		OnStartedLeading: func(ctx context.Context, _ *election.Leadership) {
			report(event{name: name, kind: "leads"})
			<-ctx.Done() // the leader's work would run here, under ctx
		},
		OnNewLeader: func(l election.Leader) {
			report(event{name: name, kind: "follows", value: string(l.Value)})
		},
	})
	report(event{name: name, kind: "stopped"})
	return err
}

// openPostgres connects to the server and makes sure the table exists.
func openPostgres(ctx context.Context, dsn string) (*pgxpool.Pool, *postgres.LockProvider, error) {
	if dsn == "" {
		return nil, nil, fmt.Errorf("%w: LEASE_POSTGRES_DSN is not set", errUnreachable)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errUnreachable, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("%w at %s: %v", errUnreachable, dsn, err)
	}
	p, err := postgres.NewLockProvider(pool, postgres.WithLockTable(table))
	if err == nil {
		err = p.Migrate(ctx) // safe to run from every process
	}
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, p, nil
}

// candidateMain is the program run as a candidate process: it campaigns
// until SIGTERM or SIGINT, writing one line to stdout per event, and
// returns the exit code.
func candidateMain(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	d, err := time.ParseDuration(os.Getenv(leaseEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	pool, p, err := openPostgres(ctx, os.Getenv(dsnEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	defer pool.Close()
	el, err := election.New(p, electionName, election.WithLeaseDuration(d))
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	var mu sync.Mutex // callbacks run on several goroutines
	err = campaign(ctx, el, name, func(ev event) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("%s %s\n", ev.kind, ev.value)
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	return 0
}

// processes are candidates run as child processes of this program.
type processes struct {
	ch       chan event
	cmds     map[string]*exec.Cmd
	done     chan struct{} // closed by close: nobody reads events any more
	scanners sync.WaitGroup
	once     sync.Once
}

// startProcesses starts alice and bob as processes campaigning on the
// server cfg.dsn names.
func startProcesses(ctx context.Context, cfg config) (*processes, error) {
	pool, _, err := openPostgres(ctx, cfg.dsn)
	if err != nil {
		return nil, err
	}
	pool.Close()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ps := &processes{ch: make(chan event, 64), cmds: map[string]*exec.Cmd{}, done: make(chan struct{})}
	for _, name := range []string{"alice", "bob"} {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), candidateEnv+"="+name, leaseEnv+"="+cfg.lease.String(), dsnEnv+"="+cfg.dsn)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			_ = ps.close()
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
		ps.cmds[name] = cmd
		ps.scanners.Go(func() { ps.scan(name, stdout) })
	}
	go func() {
		ps.scanners.Wait()
		close(ps.ch)
	}()
	return ps, nil
}

// scan turns a candidate's output lines into events.
func (ps *processes) scan(name string, r io.Reader) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		kind, value, _ := strings.Cut(s.Text(), " ")
		select {
		case ps.ch <- event{name: name, kind: kind, value: value}:
		case <-ps.done:
		}
	}
}

func (ps *processes) events() <-chan event { return ps.ch }

// crash kills name with SIGKILL: it cannot release its lock.
func (ps *processes) crash(name string) (bool, error) {
	return true, ps.cmds[name].Process.Kill()
}

// stop sends name SIGTERM, on which it resigns and exits.
func (ps *processes) stop(name string) error {
	return ps.cmds[name].Process.Signal(syscall.SIGTERM)
}

// close kills the candidates still running and waits for them all.
func (ps *processes) close() error {
	ps.once.Do(func() {
		close(ps.done)
		for _, cmd := range ps.cmds {
			_ = cmd.Process.Kill() // fails for those that exited: fine
		}
		for _, cmd := range ps.cmds {
			_ = cmd.Wait() // a killed candidate's error says so: expected
		}
		ps.scanners.Wait()
	})
	return nil
}

// inMemory are candidates run as goroutines of this process, on one
// lock.Memory.
type inMemory struct {
	svc     *lease.Service
	ch      chan event
	cancels map[string]context.CancelFunc
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

// startInMemory starts alice and bob as goroutines.
func startInMemory(ctx context.Context, d time.Duration) (*inMemory, error) {
	svc, err := lease.New()
	if err != nil {
		return nil, err
	}
	mem, err := lock.NewMemory(svc)
	var el *election.Election
	if err == nil {
		el, err = election.New(mem, electionName, election.WithLeaseDuration(d))
	}
	if err != nil {
		_ = svc.Close()
		return nil, err
	}
	m := &inMemory{svc: svc, ch: make(chan event, 64), cancels: map[string]context.CancelFunc{}, done: make(chan struct{})}
	report := func(ev event) {
		select {
		case m.ch <- ev:
		case <-m.done:
		}
	}
	for _, name := range []string{"alice", "bob"} {
		cctx, cancel := context.WithCancel(ctx)
		m.cancels[name] = cancel
		m.wg.Go(func() { _ = campaign(cctx, el, name, report) })
	}
	return m, nil
}

func (m *inMemory) events() <-chan event { return m.ch }

// crash cannot kill a goroutine: it stops name, which releases its lock.
func (m *inMemory) crash(name string) (bool, error) { return false, m.stop(name) }

// stop cancels name's context: it resigns.
func (m *inMemory) stop(name string) error {
	m.cancels[name]()
	return nil
}

// close stops both candidates, waits for them, and closes the service.
func (m *inMemory) close() error {
	var err error
	m.once.Do(func() {
		close(m.done)
		for _, cancel := range m.cancels {
			cancel()
		}
		m.wg.Wait()
		err = m.svc.Close()
	})
	return err
}
