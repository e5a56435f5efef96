//go:build !race

package toolschema

import "time"

// slack is how far past a deadline a call may return in a test: wide,
// because a full go test ./... loads two cores (see the
// race build's).
const slack = 5 * time.Second
