//go:build !race

package toolschema

import "time"

// slack is how far past a deadline a call may return in a test (see the
// race build's).
const slack = time.Second
