// Package tokenstoretest is the conformance suite every resource.TokenStore
// must pass: a load of a missing value, create, replace and delete through
// Update, an error or a panic of Update's function leaving the value
// unchanged (and the store usable), bytes copied in both directions,
// references kept apart, invalid references refused, the
// resource.MaxTokenBytes bound, and concurrent Updates that lose nothing.
//
// Run it from a test of the implementation:
//
//	func TestTokenStoreConformance(t *testing.T) {
//		tokenstoretest.Run(t, func(t *testing.T) resource.TokenStore {
//			return resource.NewMemoryTokenStore()
//		})
//	}
//
// newStore is called once per subtest and must return an empty store that
// the subtest owns (closed by the caller's t.Cleanup).
//
// # Concurrency
//
// Subtests run in parallel (t.Parallel), so newStore must be safe to call
// concurrently. ConcurrentUpdate starts Goroutines goroutines that each
// increment one counter IncrementsPerGoroutine times through Update; the
// final count must be exact. It asserts the outcome, never a timing.
package tokenstoretest
