// Package taskstoretest is the conformance suite every resource.TaskStore
// must pass: every field of a handle round trips (times to the
// millisecond, in UTC), SaveTask replaces, DeleteTask is idempotent, runs
// and calls are kept apart, Tasks sorts by call in byte order, an expired
// handle is never returned and frees its room, the bound of 1024 handles per run
// (the next distinct call fails wrapping resource.ErrLimit, a
// replace at the bound succeeds), every refusal of resource.CheckTask
// (nothing written, the task id never in the error), concurrent saves
// that lose nothing and never pass the bound together, and a cancelled
// context.
//
// Run it from a test of the implementation:
//
//	func TestTaskStoreConformance(t *testing.T) {
//		taskstoretest.Run(t, func(t *testing.T) resource.TaskStore {
//			repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), nil)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { repo.Close() })
//			return repo
//		})
//	}
//
// newStore is called once per subtest and must return an empty store that
// the subtest owns (closed by the caller's t.Cleanup).
//
// # Time
//
// Expiry is tested with handles whose Expires already lies in the past
// (an hour before the test), never by waiting; live handles expire an
// hour after the test starts, so a slow machine cannot expire them.
//
// # Concurrency
//
// Subtests run in parallel (t.Parallel), so newStore must be safe to call
// concurrently. ConcurrentSave starts Goroutines goroutines that each
// save CallsPerGoroutine handles of one run: all must be there.
// ConcurrentSaveAtBound fills a run to Goroutines/2 handles short of
// 1024 handles (resource.TaskStore's bound), then lets Goroutines goroutines save one new call
// each: exactly Goroutines/2 succeed. Both assert outcomes, never timings.
package taskstoretest
