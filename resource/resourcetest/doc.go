// Package resourcetest is the conformance suite every resource.Repository
// must pass: create, read, compare-and-set, delete, list, revisions that
// never repeat (also while deletes and creates race), copies of bytes in
// both directions, blind writes that never conflict, and concurrent
// writers that lose nothing.
//
// Run it from a test of the implementation:
//
//	func TestConformance(t *testing.T) {
//		resourcetest.Run(t, func(t *testing.T) resource.Repository {
//			repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), nil)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { repo.Close() })
//			return repo
//		})
//	}
//
// newRepo is called once per subtest and must return an empty repository
// that the subtest owns; the suite never assumes a particular store.
//
// # Concurrency
//
// Subtests run in parallel (t.Parallel), so newRepo must be safe to call
// concurrently. The concurrency subtests start Goroutines goroutines on one
// repository; they assert outcomes (who won, which revisions were handed
// out), never timings, so a slow or loaded machine does not fail them.
package resourcetest
