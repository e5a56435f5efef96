//go:build race

package toolschema

import "time"

// slack is how far past a deadline a call may return in a test: the work
// that cannot stop midway (decoding the arguments, compiling a tracked
// copy) runs many times slower under the race detector on a loaded
// machine.
const slack = 10 * time.Second
