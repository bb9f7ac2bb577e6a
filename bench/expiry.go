package bench

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotSupported marks a scenario a peer cannot run ("n/a" in reports).
var ErrNotSupported = errors.New("bench: not supported by this peer")

// expiryWatch counts expiry callbacks and records when each lease ended.
type expiryWatch struct {
	ended []int64 // unix nanoseconds by ID; ID n lands at ended[n]
	count atomic.Int64
	want  int64
	done  chan struct{}
}

func newExpiryWatch(n int) *expiryWatch {
	return &expiryWatch{ended: make([]int64, n+1), want: int64(n), done: make(chan struct{})}
}

// expired is the Expirer callback. The atomic counter orders every write to
// ended before the close of done.
func (w *expiryWatch) expired(id ID) {
	now := time.Now().UnixNano()
	if int(id) < len(w.ended) {
		w.ended[id] = now
	}
	if w.count.Add(1) == w.want {
		close(w.done)
	}
}

// wait waits until every lease expired or timeout passed.
func (w *expiryWatch) wait(timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.done:
		return nil
	case <-t.C:
		return fmt.Errorf("bench: only %d of %d leases expired within %v", w.count.Load(), w.want, timeout)
	}
}

// RunExpireBurst is scenario 5: n leases (with keys keys each) all due at
// one instant; it returns the time from the last deadline until the last
// lease is gone, in milliseconds. Setup aims the deadline past the end of
// granting and retries with more room if granting overran it.
//
// With keys (5k) one more lease, granted first and due long after the
// burst, is asked about by a goroutine of its own every probeEvery from the
// first deadline until the last lease is gone, and the sample has the p99
// and max latency of those calls (CallP99, CallMax), each counted from when
// it was due: whether the peer keeps answering during the burst. The call
// is the peer's Use if it is a User, its Deadline otherwise.
func RunExpireBurst(p Peer, n, keys int) (Sample, error) {
	room := 300*time.Millisecond + time.Duration(n*(1+keys))*2*time.Microsecond
	for range 4 {
		s, err := expireBurst(p, n, keys, room)
		if !errors.Is(err, errOverran) {
			return s, err
		}
		room *= 2
	}
	return nil, errOverran
}

var errOverran = errors.New("bench: granting overran the common deadline")

func expireBurst(p Peer, n, keys int, room time.Duration) (Sample, error) {
	l, err := p.New()
	if err != nil {
		return nil, err
	}
	defer l.Close()
	ex, isExpirer := l.(Expirer)
	sw, isSweeper := l.(Sweeper)
	if !isExpirer && !isSweeper {
		return nil, ErrNotSupported
	}
	if _, ok := l.(Keyed); keys > 0 && !ok {
		return nil, ErrNotSupported
	}
	w := newExpiryWatch(n + 1) // the prober's lease, if any, is not waited for
	w.want = int64(n)
	if isExpirer {
		ex.OnExpire(w.expired)
	}
	due := time.Now().Add(room)
	var live ID
	if keys > 0 {
		if live, err = l.Grant(room + time.Minute); err != nil {
			return nil, err
		}
	}
	var first, last time.Time
	// A lease can expire before it has been set up when granting is slow
	// (a loaded machine): that is an overrun, retried with more room, not
	// a failure of the peer.
	overran := func(err error) error {
		if !time.Now().Before(due) {
			return errOverran
		}
		return err
	}
	for i := range n {
		if !time.Now().Before(due) {
			return nil, errOverran
		}
		id, err := l.Grant(time.Until(due))
		if err != nil {
			return nil, overran(err)
		}
		if err := attachKeys(l, id, i, keys); err != nil {
			return nil, overran(err)
		}
		dl, err := l.Deadline(id)
		if err != nil {
			return nil, overran(err)
		}
		if first.IsZero() || dl.Before(first) {
			first = dl
		}
		if dl.After(last) {
			last = dl
		}
	}
	if !time.Now().Before(first) || w.count.Load() > 0 {
		return nil, errOverran
	}
	var pr *prober
	if keys > 0 {
		pr = startProber(l, live, first, w.done)
		defer pr.stop()
	}
	var took time.Duration
	if isExpirer {
		// Generous: etcd needs n/1000 s at its revoke rate.
		if err := w.wait(time.Until(last) + 30*time.Second + time.Duration(n)*2*time.Millisecond); err != nil {
			return nil, err
		}
		took = time.Duration(slices.Max(w.ended)) - time.Duration(last.UnixNano())
	} else {
		time.Sleep(time.Until(last))
		start := time.Now()
		if got := sw.Sweep(start); got != n {
			return nil, fmt.Errorf("bench: sweep expired %d of %d", got, n)
		}
		took = time.Since(start)
	}
	smp := Sample{TotalMs: ms(took)}
	if pr != nil {
		lat, err := pr.stop()
		if err != nil {
			return nil, err
		}
		if len(lat) > 0 {
			slices.Sort(lat)
			smp[CallP99] = percentile(lat, 0.99)
			smp[CallMax] = lat[len(lat)-1]
		}
	}
	return smp, nil
}

// User is implemented by peers with a cheap call that checks one lease and
// changes nothing (ours: Service.Use). Scenario 5k asks about a live lease
// with it during the burst; peers without it are asked with Deadline.
type User interface {
	Use(id ID) error
}

// probeEvery is how often the prober calls: 50,000 calls a second.
const probeEvery = 20 * time.Microsecond

// prober asks about one live lease every probeEvery, from start (the first
// deadline of a burst) until done is closed or stop is called, and records
// how long each call took from the instant it was due to start. A call held
// up delays the ones due after it, which are then made at once and count
// the delay too: a peer that stops answering for a second shows a second's
// worth of slow calls, not one (no coordinated omission).
type prober struct {
	quit     chan struct{}
	finished chan struct{}
	lat      []float64 // milliseconds
	err      error
	once     sync.Once
}

func startProber(l Leaser, id ID, start time.Time, done <-chan struct{}) *prober {
	ask := func() error { _, err := l.Deadline(id); return err }
	if u, ok := l.(User); ok {
		ask = func() error { return u.Use(id) }
	}
	// Room for 20 s of calls, allocated now: growing it during the burst
	// would stall the prober and count as the peer's latency.
	p := &prober{quit: make(chan struct{}), finished: make(chan struct{}), lat: make([]float64, 0, 1<<20)}
	go func() {
		defer close(p.finished)
		select {
		case <-time.After(time.Until(start)):
		case <-p.quit:
			return
		}
		for due := start; ; due = due.Add(probeEvery) { // at least one call, however short the burst
			waitUntil(due)
			if err := ask(); err != nil {
				p.err = fmt.Errorf("bench: a call on a live lease during the burst: %w", err)
				return
			}
			p.lat = append(p.lat, ms(max(0, time.Since(due))))
			select {
			case <-done:
				return
			case <-p.quit:
				return
			default:
			}
		}
	}()
	return p
}

// waitUntil returns at t or soon after. A timer would wake it up to a
// millisecond late, so it yields until t instead; only if the clock stands
// still meanwhile (a synctest bubble) does it sleep.
func waitUntil(t time.Time) {
	last := time.Now()
	for last.Before(t) {
		runtime.Gosched()
		now := time.Now()
		if now.Equal(last) {
			time.Sleep(t.Sub(now))
			return
		}
		last = now
	}
}

// stop stops the prober and returns its latencies. It may be called more
// than once.
func (p *prober) stop() ([]float64, error) {
	p.once.Do(func() { close(p.quit) })
	<-p.finished
	return p.lat, p.err
}

// RunExpiryLag is scenario 6: n leases of ttl granted at an even pace over
// spread, so their deadlines are spread over it too; it returns the lag from
// each lease's deadline to its expiry callback, p50, p99 and max, in
// milliseconds. Throughout, load renews other leases of the same peer (peers
// safe for concurrent use only), so the timer competes with steady traffic.
func RunExpiryLag(p Peer, n int, ttl, spread time.Duration, load Load) (Sample, error) {
	l, err := p.New()
	if err != nil {
		return nil, err
	}
	defer l.Close()
	ex, ok := l.(Expirer)
	if !ok {
		return nil, ErrNotSupported
	}
	if !Concurrent(l) {
		load = Load{}
	}
	w := newExpiryWatch(n + load.Leases)
	w.want = int64(n) // the load's leases never expire
	ex.OnExpire(w.expired)
	loaded, err := GrantMany(l, load.Leases, opTTL, 0)
	if err != nil {
		return nil, err
	}
	stop := load.start(l, loaded)
	defer stop()
	deadlines := make([]int64, n+load.Leases+1)
	ids := make([]ID, 0, n)
	start := time.Now()
	var last time.Time
	for i := range n {
		if d := time.Until(start.Add(spread * time.Duration(i) / time.Duration(n))); d > 0 {
			time.Sleep(d)
		}
		id, err := l.Grant(ttl)
		if err != nil {
			return nil, err
		}
		dl, err := l.Deadline(id)
		if err != nil {
			return nil, err
		}
		if int(id) >= len(deadlines) {
			return nil, fmt.Errorf("bench: peer issued ID %d for lease %d", id, load.Leases+i+1)
		}
		deadlines[id] = dl.UnixNano()
		ids = append(ids, id)
		last = dl
	}
	if err := w.wait(time.Until(last) + 30*time.Second + time.Duration(n)*2*time.Millisecond); err != nil {
		return nil, err
	}
	if err := stop(); err != nil {
		return nil, err
	}
	lags := make([]float64, 0, n)
	for _, id := range ids {
		lags = append(lags, ms(time.Duration(w.ended[id]-deadlines[id])))
	}
	slices.Sort(lags)
	return Sample{
		LagP50: percentile(lags, 0.50),
		LagP99: percentile(lags, 0.99),
		LagMax: lags[len(lags)-1],
	}, nil
}

// Load is the steady renewal load of scenario 6: PerSecond renewals a
// second, round robin over Leases long-lived leases of their own.
type Load struct {
	PerSecond int
	Leases    int
}

// start renews ids at the load's rate, a batch every millisecond, on a
// goroutine of its own, until the returned function is called; that
// function returns the first renewal error. It may be called more than
// once.
func (ld Load) start(l Leaser, ids []ID) (stop func() error) {
	if ld.PerSecond <= 0 || len(ids) == 0 {
		return func() error { return nil }
	}
	done, finished := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		perTick := max(1, ld.PerSecond/1000)
		i := 0
		for {
			select {
			case <-done:
				finished <- nil
				return
			case <-tick.C:
			}
			for range perTick {
				if err := l.Renew(ids[i]); err != nil {
					finished <- err
					<-done
					return
				}
				if i++; i == len(ids) {
					i = 0
				}
			}
		}
	}()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			close(done)
			err = <-finished
		})
		return err
	}
}

// RunMemory is scenario 7: the heap growth per lease after granting n
// long-lived leases with keys keys each. It returns the peer still holding
// them (and their IDs) so scenario 2 can reuse the population; the caller
// closes it.
func RunMemory(p Peer, n, keys int) (Sample, Leaser, []ID, error) {
	l, err := p.New()
	if err != nil {
		return nil, nil, nil, err
	}
	if _, ok := l.(Keyed); keys > 0 && !ok {
		l.Close()
		return nil, nil, nil, ErrNotSupported
	}
	before := heapAlloc()
	ids, err := GrantMany(l, n, opTTL, keys)
	if err != nil {
		l.Close()
		return nil, nil, nil, err
	}
	after := heapAlloc()
	// ids is the caller's, not the peer's: take it out of the growth.
	perLease := (float64(after) - float64(before) - float64(cap(ids))*8) / float64(n)
	return Sample{BytesLease: perLease}, l, ids, nil
}

// churnKeep is the share of leases scenario 7c keeps: one in churnKeep.
const churnKeep = 16

// RunMemoryChurn is scenario 7c: grant n leases, revoke all but one in
// churnKeep, and return the heap growth per surviving lease. It measures
// whether memory follows the leases held rather than the peak.
func RunMemoryChurn(p Peer, n int) (Sample, error) {
	before := heapAlloc()
	l, err := p.New()
	if err != nil {
		return nil, err
	}
	defer l.Close()
	ids, err := GrantMany(l, n, opTTL, 0)
	if err != nil {
		return nil, err
	}
	kept := make([]ID, 0, n/churnKeep+1)
	for i, id := range ids {
		if i%churnKeep == 0 {
			kept = append(kept, id)
			continue
		}
		if err := l.Revoke(id); err != nil {
			return nil, err
		}
	}
	ids = nil
	after := heapAlloc()
	runtime.KeepAlive(l)
	perLease := (float64(after) - float64(before) - float64(cap(kept))*8) / float64(len(kept))
	return Sample{BytesLease: perLease}, nil
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the q quantile of sorted by the nearest-rank method.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
