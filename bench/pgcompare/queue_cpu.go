package pgcompare

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// CPUEnv names the environment variable that makes every burn-down write
// to standard error the CPU it cost: seconds per 10,000 items of this
// process and of the server's client backends, the CPU time of the
// server's other processes (autovacuum, WAL writer...), the share of
// the machine's CPU that other work took meanwhile, and how long two fixed
// pieces of work took just before and just after (calibrate), which tells
// a slower machine from slower code. The server's
// processes are read from /proc, found through the postmaster.pid of
// LEASE_POSTGRES_DATADIR (scripts/with-postgres sets it), so the server
// must run on this machine. Set to a directory, it also writes there, for
// each burn-down, a CPU profile of this process and its allocation
// profiles at the start and the end (go tool pprof -base).
const CPUEnv = "PGCOMPARE_CPU"

// WaitsEnv, set beside CPUEnv, makes each burn-down sample the server's
// active client backends about every half millisecond
// (pg_stat_activity, on a connection of its own) and print how often each
// wait event was seen, by statement.
const WaitsEnv = "PGCOMPARE_WAITS"

// cpuProbe measures the CPU of one burn-down (CPUEnv).
type cpuProbe struct {
	label   string
	n       int
	out     io.Writer
	start   time.Time
	self    float64            // this process's CPU seconds at the start
	server  map[string]float64 // the server's, by kind of process (serverCPU)
	machine [2]float64         // the machine's busy and total CPU seconds

	profile  *os.File // the CPU profile, if one is written
	profBase string   // the profiles' path without extension

	// The wait event sampler (WaitsEnv): counts by "type/event statement".
	waits   map[string]int
	samples int
	halt    chan struct{}
	done    chan struct{}

	before calibration // the machine's speed as the burn-down began
}

// probes numbers the profiles, in the order the burn-downs ran.
var probes int

// startCPU starts a probe of a burn-down of n items of the setting label
// if CPUEnv is set, else returns nil (whose stop does nothing).
func startCPU(ctx context.Context, dsn, label string, n int) *cpuProbe {
	v := os.Getenv(CPUEnv)
	if v == "" {
		return nil
	}
	p := &cpuProbe{label: label, n: n, out: os.Stderr, before: calibrate()}
	if st, err := os.Stat(v); err == nil && st.IsDir() {
		probes++
		name := strings.NewReplacer(" ", "_", "(", "", ")", "", ",", "", "+", "_").Replace(label)
		p.profBase = filepath.Join(v, fmt.Sprintf("%02d-%s", probes, name))
		writeAllocs(p.profBase + ".allocs0")
		if f, err := os.Create(p.profBase + ".pprof"); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				p.profile = f
			} else {
				_ = f.Close()
			}
		}
	}
	if os.Getenv(WaitsEnv) != "" {
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			p.waits, p.halt, p.done = map[string]int{}, make(chan struct{}), make(chan struct{})
			go p.sample(ctx, conn)
		}
	}
	p.server, p.self, p.machine = serverCPU(), selfCPU(), machineCPU()
	p.start = time.Now()
	return p
}

// stop ends the probe and prints its figures.
func (p *cpuProbe) stop() {
	if p == nil {
		return
	}
	wall := time.Since(p.start).Seconds()
	self, server, machine := selfCPU()-p.self, serverCPU(), machineCPU()
	if p.profile != nil {
		pprof.StopCPUProfile()
		_ = p.profile.Close()
	}
	after := calibrate()
	if p.profBase != "" {
		writeAllocs(p.profBase + ".allocs1")
	}
	backends := server[backendsKey] - p.server[backendsKey]
	var others []string
	for k, v := range server {
		if d := v - p.server[k]; k != backendsKey && k != backendsSysKey && d > 0 {
			others = append(others, fmt.Sprintf("%s %.2fs", k, d))
		}
	}
	slices.Sort(others)
	busy, total := machine[0]-p.machine[0], max(machine[1]-p.machine[1], 0.01)
	per := 10000 / float64(p.n)
	fmt.Fprintf(p.out, "cpu %s: wall %.3fs; per 10,000 items: this process %.3fs, server backends %.3fs (%.0f%% in the kernel); other server processes [%s]; this run kept %.0f%% of %d cores busy, other work %.0f%% of the machine; fixed work before/after: hash of 4 MiB %s/%s ms, walk of 256k pointers %s/%s ms\n",
		p.label, wall, self*per, backends*per, 100*(server[backendsSysKey]-p.server[backendsSysKey])/max(backends, 0.001),
		strings.Join(others, ", "), 100*(self+backends)/(float64(runtime.NumCPU())*wall), runtime.NumCPU(), 100*(busy-self-backends)/total,
		ms(p.before.hash), ms(after.hash), ms(p.before.walk), ms(after.walk))
	if p.waits != nil {
		close(p.halt)
		<-p.done
		keys := make([]string, 0, len(p.waits))
		for k := range p.waits {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return p.waits[b] - p.waits[a] })
		var b strings.Builder
		fmt.Fprintf(&b, "waits %s: %d samples", p.label, p.samples)
		for _, k := range keys[:min(len(keys), 12)] {
			fmt.Fprintf(&b, "; %s %d", k, p.waits[k])
		}
		fmt.Fprintln(p.out, b.String())
	}
}

// sample counts the wait events of the server's active client backends
// until p.halt is closed.
func (p *cpuProbe) sample(ctx context.Context, conn *pgx.Conn) {
	defer close(p.done)
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	const q = `SELECT coalesce(wait_event_type, 'CPU') || '/' || coalesce(wait_event, '-') || ' ' || left(regexp_replace(query, '\s+', ' ', 'g'), 24)
FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`
	tick := time.NewTicker(500 * time.Microsecond)
	defer tick.Stop()
	for {
		select {
		case <-p.halt:
			return
		case <-tick.C:
		}
		rows, err := conn.Query(ctx, q)
		if err != nil {
			return
		}
		p.samples++
		for rows.Next() {
			var k string
			if rows.Scan(&k) == nil {
				p.waits[k]++
			}
		}
		rows.Close()
	}
}

// writeAllocs writes the allocation profile, after a collection, to path.
func writeAllocs(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	runtime.GC()
	_ = pprof.Lookup("allocs").WriteTo(f, 0)
}

// selfCPU is this process's user and system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// The keys of serverCPU for the client backends, and for their time in
// the kernel; the other processes go by their title.
const (
	backendsKey    = "client backends"
	backendsSysKey = "client backends in the kernel"
)

// serverCPU returns the CPU seconds of the server's processes by kind:
// the client backends (backendsKey, and of that their system time,
// backendsSysKey), the others by their title (autovacuum worker,
// walwriter...). It is empty if the server cannot be found.
func serverCPU() map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile(filepath.Join(os.Getenv("LEASE_POSTGRES_DATADIR"), "postmaster.pid"))
	if err != nil {
		return out
	}
	pm := strings.SplitN(string(b), "\n", 2)[0]
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		// After the command in parentheses: state, ppid, ... utime and
		// stime are the 12th and 13th.
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 || (e.Name() != pm && f[1] != pm) {
			continue
		}
		user, _ := strconv.ParseFloat(f[11], 64)
		sys, _ := strconv.ParseFloat(f[12], 64)
		kind := "postmaster"
		if e.Name() != pm {
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			kind = strings.TrimPrefix(strings.TrimRight(string(cmd), "\x00"), "postgres: ")
			if strings.Contains(kind, "(") { // user database host(port) state
				kind = backendsKey
				out[backendsSysKey] += sys / 100
			}
		}
		out[kind] += (user + sys) / 100 // in USER_HZ ticks
	}
	return out
}

// machineCPU returns the busy and the total CPU seconds of the machine
// (/proc/stat's first line), zeros if it cannot say.
func machineCPU() [2]float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [2]float64{}
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	var busy, total float64
	// user nice system idle iowait irq softirq steal; guest time is in
	// user already.
	for i, v := range f[1:min(len(f), 9)] {
		x, _ := strconv.ParseFloat(v, 64)
		total += x
		if i != 3 && i != 4 {
			busy += x
		}
	}
	return [2]float64{busy / 100, total / 100}
}
