package bench

import "fmt"

// Goal is one performance target and where ours stands against it.
type Goal struct {
	Goal   string
	Met    bool
	Known  bool // false when a number it needs is missing
	Detail string
}

// Verdict returns "met", "MISSED" or "n/a".
func (g Goal) Verdict() string {
	switch {
	case !g.Known:
		return "n/a"
	case g.Met:
		return "met"
	}
	return "MISSED"
}

// Goals evaluates the performance targets against the report.
func (r *Report) Goals() []Goal {
	etcd, ttl, base, timers := r.peerIndex("etcd lessor"), r.peerIndex("ttlcache v3"), r.peerIndex("map+heap"), r.peerIndex("Go timers")
	var out []Goal
	for _, s := range []Scenario{GrantRevoke, RenewLive} {
		out = append(out, r.ratioGoal(s, etcd, fmt.Sprintf("at least 10× etcd's lessor on %v", s),
			func(v float64) bool { return v >= 10 }, "etcd takes %s the time"))
	}
	if row, ok := r.row(ExpiryLag); ok && row.Cells[ours].Median != nil {
		p99 := row.Cells[ours].Median[LagP99]
		g := Goal{Goal: "expiry lag p99 under 1 ms", Known: true, Met: p99 < 1,
			Detail: fmt.Sprintf("ours p99 %s ms", formatValue(p99))}
		if etcd >= 0 && row.Cells[etcd].Median != nil {
			g.Detail += fmt.Sprintf(", etcd's %s ms", formatValue(row.Cells[etcd].Median[LagP99]))
		}
		out = append(out, g)
	} else {
		out = append(out, Goal{Goal: "expiry lag p99 under 1 ms"})
	}
	out = append(out, r.lagFloorGoal(timers, r.peerIndex("one Go timer")))
	out = append(out,
		r.limitGoal(GrantRevoke, NsPerOp, 250, "grant+revoke at most 250 ns", "ours %s ns"),
		r.limitGoal(RenewRandom, NsPerOp, 250, "renew at random among N live leases at most 250 ns", "ours %s ns"),
		r.limitGoal(ExpireBurstKeyed, TotalMs, 1000, "N keyed leases expire in under 1 s", "ours %s ms"),
		r.burstCallGoal(etcd),
		r.limitGoal(MemoryChurn, BytesLease, 200, "at most 200 B per surviving lease after churn", "ours %s B"),
		r.speedupGoal())
	out = append(out, r.ratioGoal(GrantRevoke, ttl, "at least as fast as ttlcache on set+delete",
		func(v float64) bool { return v >= 1 }, "ttlcache takes %s the time"))
	for _, s := range []Scenario{GrantRevoke, RenewLive} {
		out = append(out, r.ratioGoal(s, base, fmt.Sprintf("within 2× of the bare map+heap on %v", s),
			func(v float64) bool { return v >= 0.5 }, "map+heap takes %s the time"))
	}
	return out
}

// lagFloorGoal compares our expiry lag p99 with the runtime's floor under
// the same load: the lower p99 of the bare timer peers (a timer per lease,
// and one timer re-armed for the earliest deadline), which no service on Go
// timers can beat.
func (r *Report) lagFloorGoal(floors ...int) Goal {
	const goal = "expiry lag p99 within 10% of bare Go timers"
	row, ok := r.row(ExpiryLag)
	if !ok || row.Cells[ours].Median == nil {
		return Goal{Goal: goal}
	}
	best := -1
	for _, f := range floors {
		if f >= 0 && row.Cells[f].Median != nil && (best < 0 || row.Cells[f].Median[LagP99] < row.Cells[best].Median[LagP99]) {
			best = f
		}
	}
	if best < 0 {
		return Goal{Goal: goal}
	}
	o, f := row.Cells[ours].Median[LagP99], row.Cells[best].Median[LagP99]
	return Goal{Goal: goal, Known: true, Met: o <= 1.1*f,
		Detail: fmt.Sprintf("ours p99 %s ms, %s's %s ms", formatValue(o), r.Peers[best].Name, formatValue(f))}
}

// burstCallGoal checks the latency of a call on a live lease while the
// keyed burst (5k) is being expired: the service must keep answering.
func (r *Report) burstCallGoal(etcd int) Goal {
	const goal = "concurrent call p99 during the keyed burst under 1 ms"
	row, ok := r.row(ExpireBurstKeyed)
	if !ok {
		return Goal{Goal: goal}
	}
	p99, ok := row.Cells[ours].Median[CallP99]
	if !ok {
		return Goal{Goal: goal}
	}
	g := Goal{Goal: goal, Known: true, Met: p99 < 1,
		Detail: fmt.Sprintf("ours p99 %s ms, max %s ms", formatValue(p99), formatValue(row.Cells[ours].Median[CallMax]))}
	if etcd >= 0 {
		if v, ok := row.Cells[etcd].Median[CallP99]; ok {
			g.Detail += fmt.Sprintf("; etcd's p99 %s ms", formatValue(v))
		}
	}
	return g
}

// limitGoal checks one of our medians against an absolute limit.
func (r *Report) limitGoal(s Scenario, metric string, limit float64, goal, detail string) Goal {
	row, ok := r.row(s)
	if !ok || row.Cells[ours].Median == nil {
		return Goal{Goal: goal}
	}
	v := row.Cells[ours].Median[metric]
	return Goal{Goal: goal, Known: true, Met: v <= limit, Detail: fmt.Sprintf(detail, formatValue(v))}
}

// speedupGoal compares our throughput on every core (scenario 4) with one
// goroutine's (4s).
func (r *Report) speedupGoal() Goal {
	const goal = "grant+renew+revoke on 2 goroutines at least 1.6× one goroutine's throughput"
	par, ok1 := r.row(ParallelMixed)
	one, ok2 := r.row(SerialMixed)
	if !ok1 || !ok2 || par.Cells[ours].Median == nil || one.Cells[ours].Median == nil {
		return Goal{Goal: goal}
	}
	p, o := par.Cells[ours].Median[NsPerOp], one.Cells[ours].Median[NsPerOp]
	if p <= 0 {
		return Goal{Goal: goal}
	}
	return Goal{Goal: goal, Known: true, Met: o/p >= 1.6,
		Detail: fmt.Sprintf("%s× (%s ns/op on all cores, %s on one)", formatValue(o/p), formatValue(p), formatValue(o))}
}

func (r *Report) ratioGoal(s Scenario, peer int, goal string, ok func(float64) bool, detail string) Goal {
	row, found := r.row(s)
	if !found || peer < 0 {
		return Goal{Goal: goal}
	}
	v, known := row.Ratio(peer, NsPerOp)
	if !known {
		return Goal{Goal: goal}
	}
	return Goal{Goal: goal, Known: true, Met: ok(v), Detail: fmt.Sprintf(detail, formatRatio(v, true)) + " of ours"}
}

func (r *Report) row(s Scenario) (Row, bool) {
	for _, row := range r.Rows {
		if row.Info.Scenario == s {
			return row, true
		}
	}
	return Row{}, false
}

func (r *Report) peerIndex(name string) int {
	for i, p := range r.Peers {
		if p.Name == name {
			return i
		}
	}
	return -1
}
