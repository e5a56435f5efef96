package taskstoretest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/internal/taskrules"
)

// Concurrency sizes of the suite.
const (
	// Goroutines is how many goroutines race in ConcurrentSave and
	// ConcurrentSaveAtBound.
	Goroutines = 16
	// CallsPerGoroutine is how many handles each saves in ConcurrentSave.
	CallsPerGoroutine = 8
)

// Run runs the conformance suite against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) resource.TaskStore) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s resource.TaskStore)
	}{
		{"Empty", testEmpty},
		{"RoundTrip", testRoundTrip},
		{"RoundTripAtBounds", testRoundTripAtBounds},
		{"Replace", testReplace},
		{"Delete", testDelete},
		{"Isolation", testIsolation},
		{"Sorted", testSorted},
		{"Expiry", testExpiry},
		{"MaxRunTasks", testMaxRunTasks},
		{"Refusals", testRefusals},
		{"BadKeys", testBadKeys},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentSave", testConcurrentSave},
		{"ConcurrentSaveAtBound", testConcurrentSaveAtBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// handle returns a valid handle of (run, call) that expires an hour from
// now: no test runs long enough to see it expire.
func handle(run, call string) resource.TaskHandle {
	now := time.Now()
	return resource.TaskHandle{
		Run:      run,
		Call:     call,
		Server:   "tools/research",
		Revision: 3,
		Tool:     "simulate-research-query",
		TaskID:   "task-" + call,
		Protocol: "2025-11-25",
		Created:  now.Add(-time.Minute),
		Expires:  now.Add(time.Hour),
	}
}

// expired returns h made to have expired an hour ago.
func expired(h resource.TaskHandle) resource.TaskHandle {
	h.Created = time.Now().Add(-2 * time.Hour)
	h.Expires = time.Now().Add(-time.Hour)
	return h
}

// stored is h as a store gives it back: times to the millisecond, in UTC.
func stored(h resource.TaskHandle) resource.TaskHandle {
	h.Created = time.UnixMilli(h.Created.UnixMilli()).UTC()
	h.Expires = time.UnixMilli(h.Expires.UnixMilli()).UTC()
	return h
}

func save(t *testing.T, s resource.TaskStore, h resource.TaskHandle) {
	t.Helper()
	if err := s.SaveTask(ctx(t), h); err != nil {
		t.Fatalf("SaveTask(%q, %q): %v", h.Run, h.Call, err)
	}
}

// want checks that Tasks(run) returns exactly want (saved handles, in
// order), each field compared exactly and times with time.Equal and in
// UTC.
func want(t *testing.T, s resource.TaskStore, run string, want ...resource.TaskHandle) {
	t.Helper()
	got, err := s.Tasks(ctx(t), run)
	if err != nil {
		t.Fatalf("Tasks(%q): %v", run, err)
	}
	want = append([]resource.TaskHandle(nil), want...)
	for i := range want {
		want[i] = stored(want[i])
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("Tasks(%q) mismatch (-want +got):\n%s", run, diff)
	}
	for _, h := range got {
		if h.Created.Location() != time.UTC || h.Expires.Location() != time.UTC {
			t.Fatalf("Tasks(%q): call %q has times in %v and %v, want UTC", run, h.Call, h.Created.Location(), h.Expires.Location())
		}
	}
}

func del(t *testing.T, s resource.TaskStore, run, call string) {
	t.Helper()
	if err := s.DeleteTask(ctx(t), run, call); err != nil {
		t.Fatalf("DeleteTask(%q, %q): %v", run, call, err)
	}
}

func testEmpty(t *testing.T, s resource.TaskStore) {
	got, err := s.Tasks(ctx(t), "run-1")
	if err != nil || len(got) != 0 {
		t.Fatalf("Tasks of a new store = %v, %v; want none, nil", got, err)
	}
}

// testRoundTrip: every field comes back as saved, the times to the
// millisecond and in UTC whatever their zone (issue 26 item 3).
func testRoundTrip(t *testing.T, s resource.TaskStore) {
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	h := resource.TaskHandle{
		Run:      "run-7f3a",
		Call:     "toolu_01ABC",
		Server:   "research/deep",
		Revision: 1<<53 + 1, // more than a float64 keeps
		Tool:     "simulate-research-query",
		TaskID:   "786512e2-9e0d-44bd-8f29-789f320fe840 ü ✓",
		Protocol: "2026-07-28",
		// Nanoseconds, a zone and a monotonic reading: all dropped.
		Created: time.Date(2026, 12, 3, 15, 4, 5, 123456789, zone),
		Expires: time.Now().Add(time.Hour).In(zone),
	}
	save(t, s, h)
	want(t, s, h.Run, h)
	got, err := s.Tasks(ctx(t), h.Run)
	if err != nil {
		t.Fatal(err)
	}
	if wantC := time.Date(2026, 12, 3, 9, 34, 5, 123000000, time.UTC); !got[0].Created.Equal(wantC) {
		t.Fatalf("Created = %v, want %v", got[0].Created, wantC)
	}
	// The slice is the caller's: changing it changes nothing stored.
	got[0].TaskID = "changed"
	want(t, s, h.Run, h)
}

// testRoundTripAtBounds: each string at its bound, and the earliest and
// latest times, are kept exactly.
func testRoundTripAtBounds(t *testing.T, s resource.TaskStore) {
	h := resource.TaskHandle{
		Run:      strings.Repeat("r", 256),
		Call:     strings.Repeat("c", 255) + "z",
		Server:   resource.Ref(strings.Repeat("a", 64) + "/" + strings.Repeat("b", 63)),
		Revision: 1<<63 - 1,
		Tool:     strings.Repeat("t", 256),
		TaskID:   strings.Repeat("é", 512), // 1 KiB of two-byte runes
		Protocol: strings.Repeat("p", 64),
		Created:  time.Unix(0, 0),
		Expires:  time.Date(9999, 12, 31, 23, 59, 59, 999000000, time.UTC),
	}
	save(t, s, h)
	control := handle(h.Run, "\x01\t\u00a0\u2028\U0001F600")
	save(t, s, control)
	want(t, s, h.Run, control, h)
}

func testReplace(t *testing.T, s resource.TaskStore) {
	a := handle("run-1", "call-1")
	save(t, s, a)
	b := a
	b.Server, b.Revision, b.Tool, b.TaskID, b.Protocol = "other", 9, "other-tool", "task-2", "2026-07-28"
	b.Created, b.Expires = a.Created.Add(time.Second), a.Expires.Add(time.Hour)
	save(t, s, b)
	want(t, s, "run-1", b)
	save(t, s, a)
	want(t, s, "run-1", a)
}

// testDelete: DeleteTask removes one handle; deleting it again, or one
// never saved, of a run never seen, is no error.
func testDelete(t *testing.T, s resource.TaskStore) {
	a, b := handle("run-1", "call-1"), handle("run-1", "call-2")
	save(t, s, a)
	save(t, s, b)
	del(t, s, "run-1", "call-1")
	want(t, s, "run-1", b)
	del(t, s, "run-1", "call-1")
	del(t, s, "run-1", "never")
	del(t, s, "never", "call-2")
	want(t, s, "run-1", b)
	del(t, s, "run-1", "call-2")
	want(t, s, "run-1")
	// A deleted call can be saved again.
	save(t, s, a)
	want(t, s, "run-1", a)
}

// testIsolation: runs and calls are their own keys, a prefix of another
// included; a write or delete in one changes no other.
func testIsolation(t *testing.T, s resource.TaskStore) {
	r1c1, r1c2 := handle("r1", "c1"), handle("r1", "c2")
	r2c1 := handle("r2", "c1")
	r2c1.TaskID = "other"
	prefixRun, prefixCall := handle("r", "c1"), handle("r1", "c")
	longer := handle("r1c1", "c1") // run and call run together
	for _, h := range []resource.TaskHandle{r1c1, r1c2, r2c1, prefixRun, prefixCall, longer} {
		save(t, s, h)
	}
	want(t, s, "r1", prefixCall, r1c1, r1c2)
	want(t, s, "r2", r2c1)
	want(t, s, "r", prefixRun)
	want(t, s, "r1c1", longer)
	del(t, s, "r1", "c1")
	want(t, s, "r1", prefixCall, r1c2)
	want(t, s, "r2", r2c1)
	want(t, s, "r1c1", longer)
	want(t, s, "R1") // case matters
}

// testSorted: Tasks sorts by Call in byte order, whatever the order of
// the saves.
func testSorted(t *testing.T, s resource.TaskStore) {
	calls := []string{"call_9", "b", "B", "call_10", "a", "aé", "a b", "\u00e9", "Z", "~", "call_1"}
	for _, c := range calls {
		save(t, s, handle("run", c))
	}
	got, err := s.Tasks(ctx(t), "run")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, h := range got {
		order = append(order, h.Call)
	}
	wantOrder := []string{"B", "Z", "a", "a b", "aé", "b", "call_1", "call_10", "call_9", "~", "\u00e9"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Fatalf("Tasks order mismatch (-want +got):\n%s", diff)
	}
}

// testExpiry: a handle whose Expires has passed is not returned, replaces
// a live one, and can be replaced by a live one (issue 26 item 3: dropped
// after the task's TTL). No clock is waited on.
func testExpiry(t *testing.T, s resource.TaskStore) {
	live, old := handle("run", "live"), expired(handle("run", "old"))
	save(t, s, live)
	save(t, s, old)
	want(t, s, "run", live)
	// A handle that expires as it is saved is expired when read.
	edge := handle("run", "edge")
	edge.Created, edge.Expires = time.Now().Add(-time.Hour), time.Now()
	save(t, s, edge)
	want(t, s, "run", live)
	// A live handle replaced by an expired one is gone ...
	save(t, s, expired(live))
	want(t, s, "run")
	// ... and an expired one replaced by a live one is back.
	save(t, s, live)
	want(t, s, "run", live)
	// Expired handles of another run do not hide live ones.
	save(t, s, expired(handle("other", "x")))
	want(t, s, "run", live)
	want(t, s, "other")
	// Deleting an expired handle is no error.
	del(t, s, "other", "x")
}

// testMaxRunTasks: a run holds at most taskrules.MaxRunTasks handles; the
// next distinct call fails wrapping ErrLimit and writes nothing, a
// replace at the bound succeeds, an expired handle frees its room, and
// other runs are not affected.
func testMaxRunTasks(t *testing.T, s resource.TaskStore) {
	var all []resource.TaskHandle
	for i := range taskrules.MaxRunTasks {
		h := handle("full", fmt.Sprintf("call-%04d", i))
		save(t, s, h)
		all = append(all, h)
	}
	over := handle("full", "call-over")
	err := s.SaveTask(ctx(t), over)
	if !errors.Is(err, resource.ErrLimit) || !strings.Contains(err.Error(), "MaxRunTasks") {
		t.Fatalf("SaveTask of call %d err = %v, want ErrLimit naming MaxRunTasks", taskrules.MaxRunTasks+1, err)
	}
	want(t, s, "full", all...)
	// A replace at the bound is not a new handle.
	all[7].TaskID = "replaced"
	save(t, s, all[7])
	// Another run has its own room.
	save(t, s, handle("other", "call-0000"))
	want(t, s, "full", all...)
	// A handle replaced by an expired one no longer counts.
	save(t, s, expired(all[0]))
	save(t, s, over)
	want(t, s, "full", append(all[1:], over)...)
	if err := s.SaveTask(ctx(t), handle("full", "call-over-2")); !errors.Is(err, resource.ErrLimit) {
		t.Fatalf("SaveTask past the bound again err = %v, want ErrLimit", err)
	}
	// A deleted one frees its room too.
	del(t, s, "full", all[1].Call)
	save(t, s, handle("full", "call-over-2"))
}

// secretID is the task id of the refused handles: no error may carry it
// (messages never carry a server's values).
const secretID = "SECRET-TASK-ID"

// testRefusals: every handle CheckTask refuses, SaveTask refuses too,
// writing nothing; the error names the field, never the task id; a field
// past its bound wraps ErrLimit.
func testRefusals(t *testing.T, s resource.TaskStore) {
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tt := range []struct {
		name  string
		edit  func(*resource.TaskHandle)
		field string
		limit bool
	}{
		{"empty run", func(h *resource.TaskHandle) { h.Run = "" }, "Run", false},
		{"long run", func(h *resource.TaskHandle) { h.Run = long(257) }, "Run", true},
		{"run not UTF-8", func(h *resource.TaskHandle) { h.Run = "r\xff" }, "Run", false},
		{"run with NUL", func(h *resource.TaskHandle) { h.Run = "r\x00" }, "Run", false},
		{"empty call", func(h *resource.TaskHandle) { h.Call = "" }, "Call", false},
		{"long call", func(h *resource.TaskHandle) { h.Call = long(257) }, "Call", true},
		{"call not UTF-8", func(h *resource.TaskHandle) { h.Call = "\xc3" }, "Call", false},
		{"call with NUL", func(h *resource.TaskHandle) { h.Call = "\x00" }, "Call", false},
		{"empty server", func(h *resource.TaskHandle) { h.Server = "" }, "Server", false},
		{"invalid server", func(h *resource.TaskHandle) { h.Server = "a/b/c" }, "Server", false},
		{"upper-case server", func(h *resource.TaskHandle) { h.Server = "Tools" }, "Server", false},
		{"zero revision", func(h *resource.TaskHandle) { h.Revision = 0 }, "Revision", false},
		{"negative revision", func(h *resource.TaskHandle) { h.Revision = -1 }, "Revision", false},
		{"empty tool", func(h *resource.TaskHandle) { h.Tool = "" }, "Tool", false},
		{"long tool", func(h *resource.TaskHandle) { h.Tool = long(257) }, "Tool", true},
		{"tool with NUL", func(h *resource.TaskHandle) { h.Tool = "t\x00" }, "Tool", false},
		{"empty task id", func(h *resource.TaskHandle) { h.TaskID = "" }, "TaskID", false},
		{"long task id", func(h *resource.TaskHandle) { h.TaskID = secretID + long(1025-len(secretID)) }, "TaskID", true},
		{"task id not UTF-8", func(h *resource.TaskHandle) { h.TaskID = secretID + "\xff" }, "TaskID", false},
		{"task id with NUL", func(h *resource.TaskHandle) { h.TaskID = secretID + "\x00" }, "TaskID", false},
		{"empty protocol", func(h *resource.TaskHandle) { h.Protocol = "" }, "Protocol", false},
		{"long protocol", func(h *resource.TaskHandle) { h.Protocol = long(65) }, "Protocol", true},
		{"zero created", func(h *resource.TaskHandle) { h.Created = time.Time{} }, "Created", false},
		{"created before 1970", func(h *resource.TaskHandle) { h.Created = time.Unix(-1, 0) }, "Created", false},
		{"zero expires", func(h *resource.TaskHandle) { h.Expires = time.Time{} }, "Expires", false},
		{"expires after 9999", func(h *resource.TaskHandle) { h.Expires = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "Expires", false},
		{"expires before created", func(h *resource.TaskHandle) { h.Expires = h.Created.Add(-time.Second) }, "Expires", false},
		{"expires equals created", func(h *resource.TaskHandle) { h.Expires = h.Created }, "Expires", false},
		{"expires within the created millisecond", func(h *resource.TaskHandle) {
			h.Created = time.UnixMilli(h.Created.UnixMilli())
			h.Expires = h.Created.Add(999 * time.Microsecond)
		}, "Expires", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := handle("refused", "call")
			h.TaskID = secretID
			tt.edit(&h)
			for name, err := range map[string]error{"CheckTask": resource.CheckTask(h), "SaveTask": s.SaveTask(ctx(t), h)} {
				switch {
				case err == nil:
					t.Fatalf("%s: no error", name)
				case !strings.Contains(err.Error(), tt.field):
					t.Errorf("%s err = %v, want one naming %s", name, err, tt.field)
				case strings.Contains(err.Error(), secretID):
					t.Errorf("%s err carries the task id: %v", name, err)
				case errors.Is(err, resource.ErrLimit) != tt.limit:
					t.Errorf("%s err = %v; wraps ErrLimit %v, want %v", name, err, !tt.limit, tt.limit)
				}
			}
		})
	}
	want(t, s, "refused")
}

// testBadKeys: Tasks and DeleteTask refuse the run and call IDs SaveTask
// refuses, rather than answer for a key no handle can have.
func testBadKeys(t *testing.T, s resource.TaskStore) {
	for _, run := range []string{"", strings.Repeat("r", 257), "\xff", "\x00"} {
		if got, err := s.Tasks(ctx(t), run); err == nil || !strings.Contains(err.Error(), "Run") {
			t.Errorf("Tasks(%q) = %v, %v; want an error naming Run", run, got, err)
		}
		if err := s.DeleteTask(ctx(t), run, "call"); err == nil || !strings.Contains(err.Error(), "Run") {
			t.Errorf("DeleteTask(%q, call) err = %v, want one naming Run", run, err)
		}
	}
	for _, call := range []string{"", strings.Repeat("c", 257), "\xff", "\x00"} {
		if err := s.DeleteTask(ctx(t), "run", call); err == nil || !strings.Contains(err.Error(), "Call") {
			t.Errorf("DeleteTask(run, %q) err = %v, want one naming Call", call, err)
		}
	}
	if err := s.DeleteTask(ctx(t), strings.Repeat("r", 257), "call"); !errors.Is(err, resource.ErrLimit) {
		t.Errorf("DeleteTask of a long run err = %v, want ErrLimit", err)
	}
}

func testCanceledContext(t *testing.T, s resource.TaskStore) {
	h := handle("run", "call")
	save(t, s, h)
	c, cancel := context.WithCancel(context.Background())
	cancel()
	other := handle("run", "other")
	if err := s.SaveTask(c, other); !errors.Is(err, context.Canceled) {
		t.Fatalf("SaveTask err = %v, want context.Canceled", err)
	}
	if got, err := s.Tasks(c, "run"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Tasks = %v, %v; want context.Canceled", got, err)
	}
	if err := s.DeleteTask(c, "run", "call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("DeleteTask err = %v, want context.Canceled", err)
	}
	want(t, s, "run", h)
}

// parallel runs f(0) ... f(n-1) in goroutines at once and returns their
// errors.
func parallel(n int, f func(i int) error) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errs
}

// testConcurrentSave: Goroutines writers save CallsPerGoroutine handles
// each, of one run (and each one handle of a run of its own); none is
// lost.
func testConcurrentSave(t *testing.T, s resource.TaskStore) {
	shared := make([][]resource.TaskHandle, Goroutines)
	own := make([]resource.TaskHandle, Goroutines)
	var all []resource.TaskHandle
	for g := range Goroutines {
		for i := range CallsPerGoroutine {
			shared[g] = append(shared[g], handle("shared", fmt.Sprintf("g%02d-c%02d", g, i)))
		}
		all = append(all, shared[g]...)
		own[g] = handle(fmt.Sprintf("own-%02d", g), "call")
	}
	errs := parallel(Goroutines, func(g int) error {
		for _, h := range shared[g] {
			if err := s.SaveTask(ctx(t), h); err != nil {
				return err
			}
		}
		return s.SaveTask(ctx(t), own[g])
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("SaveTask: %v", err)
		}
	}
	want(t, s, "shared", all...)
	for _, h := range own {
		want(t, s, h.Run, h)
	}
}

// testConcurrentSaveAtBound: with room for Goroutines/2 more handles,
// Goroutines writers each save a new call at once: exactly Goroutines/2
// succeed and the others fail with ErrLimit. A store whose count and
// write are two steps lets more in.
func testConcurrentSaveAtBound(t *testing.T, s resource.TaskStore) {
	room := Goroutines / 2
	for i := range taskrules.MaxRunTasks - room {
		save(t, s, handle("full", fmt.Sprintf("call-%04d", i)))
	}
	errs := parallel(Goroutines, func(g int) error {
		return s.SaveTask(ctx(t), handle("full", fmt.Sprintf("new-%02d", g)))
	})
	saved := 0
	for _, err := range errs {
		switch {
		case err == nil:
			saved++
		case !errors.Is(err, resource.ErrLimit):
			t.Fatalf("SaveTask: %v", err)
		}
	}
	got, err := s.Tasks(ctx(t), "full")
	if err != nil {
		t.Fatal(err)
	}
	if saved != room || len(got) != taskrules.MaxRunTasks {
		t.Fatalf("%d saves succeeded and the run holds %d handles; want %d and %d", saved, len(got), room, taskrules.MaxRunTasks)
	}
}
