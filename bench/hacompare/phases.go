package hacompare

import (
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// KillPhases breaks the time from a leader's kill to another serving into
// what the survivors showed, each from the kill (-1 when not seen). It is
// a plain value.
type KillPhases struct {
	// Silent is when the killed leader last reached a survivor: the
	// latest LastContact the survivors report.
	Silent time.Duration
	// Closed is when the killed node's Close returned.
	Closed time.Duration
	// Lost is when each survivor, in turn, stopped knowing a leader (its
	// heartbeat timeout passed, or it stood for election).
	Lost [2]time.Duration
	// Candidate is when a survivor first stood for election.
	Candidate time.Duration
	// Leader is when a survivor first became leader (raft's state).
	Leader time.Duration
	// Serving is when that leader first served (its term's barrier
	// applied).
	Serving time.Duration
	// FirstRun is when the first handler started after Leader.
	FirstRun time.Duration
	// Full is the end of the first 50ms window after Leader in which
	// handlers started at the rate before the kill.
	Full time.Duration
}

func (p KillPhases) String() string {
	ms := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("silent %s, closed %s, lost %s/%s, candidate %s, leader %s, serving %s, first run %s, full rate %s",
		ms(p.Silent), ms(p.Closed), ms(p.Lost[0]), ms(p.Lost[1]), ms(p.Candidate), ms(p.Leader), ms(p.Serving), ms(p.FirstRun), ms(p.Full))
}

// watcher polls the survivors of a kill every millisecond.
type watcher struct {
	quit chan struct{}
	done chan KillPhases
}

// watch starts watching every running node but killed; times are since
// start, made relative to the kill by stop.
func (c *cluster) watch(killed int, start time.Time) *watcher {
	w := &watcher{quit: make(chan struct{}), done: make(chan KillPhases, 1)}
	nodes := c.running()
	dead := nodes[killed]
	go func() {
		p := KillPhases{FirstRun: -1, Full: -1, Silent: -1, Closed: -1, Lost: [2]time.Duration{-1, -1}, Candidate: -1, Leader: -1, Serving: -1}
		lost := map[int]bool{}
		var lastContact time.Time
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			now := time.Since(start)
			if p.Closed < 0 && c.running()[killed] == nil && dead.Raft().State() == raft.Shutdown {
				p.Closed = now
			}
			for i, n := range nodes {
				if i == killed {
					continue
				}
				st := n.Status()
				if st.State == "follower" && p.Candidate < 0 && p.Leader < 0 && st.LastContact.After(lastContact) {
					lastContact = st.LastContact
				}
				if st.LeaderID == "" && !lost[i] && p.Leader < 0 {
					lost[i] = true
					p.Lost[len(lost)-1] = now
				}
				switch {
				case st.State == "candidate" && p.Candidate < 0:
					p.Candidate = now
				case st.State == "leader" && p.Leader < 0:
					p.Leader = now
				}
				if st.State == "leader" && st.Serving && p.Serving < 0 {
					p.Serving = now
				}
			}
			if !lastContact.IsZero() {
				p.Silent = lastContact.Sub(start)
			}
			select {
			case <-w.quit:
				w.done <- p
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the watch and returns the phases from killAt.
func (w *watcher) stop(killAt time.Duration) KillPhases {
	close(w.quit)
	p := <-w.done
	for _, d := range []*time.Duration{&p.Silent, &p.Closed, &p.Lost[0], &p.Lost[1], &p.Candidate, &p.Leader, &p.Serving} {
		if *d >= 0 {
			*d -= killAt
		}
	}
	return p
}

// rows are the table rows of the breakdown, each from the kill but the
// last two, from the step before.
func (p KillPhases) rows() string {
	ms := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return msText(d) + " ms"
	}
	since := func(a, b time.Duration) time.Duration {
		if a < 0 || b < 0 {
			return -1
		}
		return a - b
	}
	return fmt.Sprintf("| of which: kill to the survivors' last contact with the killed leader | %s |\n"+
		"| kill to the first survivor's heartbeat timeout (it stands for election) | %s |\n"+
		"| kill to the second survivor's heartbeat timeout (until then it refuses votes: it knows a leader) | %s |\n"+
		"| kill to raft electing a leader | %s |\n| raft leader to serving (its term's barrier applied) | %s |\n"+
		"| serving to the first handler run | %s |\n",
		ms(p.Silent), ms(p.Lost[0]), ms(p.Lost[1]), ms(p.Leader), ms(since(p.Serving, p.Leader)), ms(since(p.FirstRun, p.Serving)))
}
