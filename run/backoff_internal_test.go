package run

import (
	"testing"
	"time"
)

// The restart backoff doubles up to its cap and never wraps, whatever the
// count.
func TestBackoffAfterSaturates(t *testing.T) {
	t.Parallel()
	r := &Run{restartBackoff: time.Second}
	for count, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 9: 256 * time.Second, 10: maxRestartBackoff, 35: maxRestartBackoff, 70: maxRestartBackoff, 1 << 20: maxRestartBackoff} {
		if got := r.backoffAfter(count); got != want {
			t.Errorf("backoffAfter(%d) = %s; want %s", count, got, want)
		}
	}
}
