//go:build !unix

package mcpconn_test

import "time"

// Without getrusage the CPU metrics read zero.

func cpuNow() time.Duration  { return 0 }
func selfNow() time.Duration { return 0 }
