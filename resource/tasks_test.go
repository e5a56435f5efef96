package resource_test

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/internal/taskrules"
	"github.com/agtsdk/agt/resource/taskstoretest"
)

// The suite holds for the plainest store too: one in memory, here.
func TestMemoryTaskStoreConformance(t *testing.T) {
	t.Parallel()
	taskstoretest.Run(t, func(*testing.T) resource.TaskStore {
		return &memoryTaskStore{runs: map[string]map[string]resource.TaskHandle{}}
	})
}

// memoryTaskStore keeps handles in memory; SaveTask drops every expired
// handle it holds, of any run.
type memoryTaskStore struct {
	mu   sync.Mutex
	runs map[string]map[string]resource.TaskHandle
}

func (m *memoryTaskStore) SaveTask(ctx context.Context, h resource.TaskHandle) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := resource.CheckTask(h); err != nil {
		return err
	}
	h.Created, h.Expires = taskrules.Time(h.Created), taskrules.Time(h.Expires)
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for run, calls := range m.runs {
		for call, old := range calls {
			if taskrules.Expired(old.Expires, now) {
				delete(calls, call)
			}
		}
		if len(calls) == 0 {
			delete(m.runs, run)
		}
	}
	calls := m.runs[h.Run]
	others := len(calls)
	if _, ok := calls[h.Call]; ok {
		others--
	}
	if others >= taskrules.MaxRunTasks {
		return taskrules.Full()
	}
	if calls == nil {
		calls = map[string]resource.TaskHandle{}
		m.runs[h.Run] = calls
	}
	calls[h.Call] = h
	return nil
}

func (m *memoryTaskStore) Tasks(ctx context.Context, run string) ([]resource.TaskHandle, error) {
	if err := taskrules.Run(ctx, run); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	out := []resource.TaskHandle{}
	for call, h := range m.runs[run] {
		if taskrules.Expired(h.Expires, now) {
			delete(m.runs[run], call)
			continue
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b resource.TaskHandle) int { return cmp.Compare(a.Call, b.Call) })
	return out, nil
}

func (m *memoryTaskStore) DeleteTask(ctx context.Context, run, call string) error {
	if err := taskrules.Key(ctx, run, call); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs[run], call)
	if len(m.runs[run]) == 0 {
		delete(m.runs, run)
	}
	return nil
}
