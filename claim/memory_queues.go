package claim

import (
	"context"
	"slices"
	"strings"

	"github.com/leasehold/lease/claim/claimstore"
)

var (
	_ claimstore.Pauser      = (*Memory)(nil)
	_ claimstore.QueueLister = (*Memory)(nil)
)

// Pause pauses queue; see claimstore.Pauser.
func (m *Memory) Pause(ctx context.Context, queue string) error {
	const op = "pause"
	if err := checkQueue(ctx, op, queue); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.unlock()
	now, err := m.begin(op)
	if err != nil {
		return err
	}
	if _, ok := m.paused[queue]; ok {
		return nil
	}
	if m.paused == nil {
		m.paused = map[string]int64{}
	}
	m.paused[queue] = now
	if qs := m.findQueue(queue); qs != nil {
		qs.paused = true
	}
	return nil
}

// Resume resumes queue and wakes its waiters; see claimstore.Pauser.
func (m *Memory) Resume(ctx context.Context, queue string) error {
	const op = "resume"
	if err := checkQueue(ctx, op, queue); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.unlock()
	if err := m.open(op); err != nil {
		return err
	}
	if _, ok := m.paused[queue]; !ok {
		return nil
	}
	delete(m.paused, queue)
	if qs := m.findQueue(queue); qs != nil {
		qs.paused = false
		qs.signal()
		m.retireIfUnused(qs)
	}
	return nil
}

// Queues lists the queues with items in any state, and the paused ones,
// in name order; see claimstore.QueueLister. It costs the number of queues.
func (m *Memory) Queues(ctx context.Context, q QueueQuery) ([]QueueInfo, error) {
	if err := checkQueueQuery(ctx, q); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.unlock()
	if err := m.open("queues"); err != nil {
		return nil, err
	}
	var names []string
	for name, qs := range m.queues.m {
		if name > q.After && (qs.counts() != Counts{} || qs.paused) {
			names = append(names, name)
		}
	}
	for name := range m.paused {
		if name > q.After && m.findQueue(name) == nil {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, strings.Compare)
	names = names[:min(len(names), q.Limit)]
	out := make([]QueueInfo, len(names))
	for i, name := range names {
		out[i] = QueueInfo{Name: name}
		if qs := m.findQueue(name); qs != nil {
			out[i].Counts = qs.counts()
		}
		if at, ok := m.paused[name]; ok {
			out[i].Paused, out[i].PausedAt = true, m.at(at)
		}
	}
	return out, nil
}
