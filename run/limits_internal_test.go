package run

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Limits resolves its defaults in one place: nil and zero fields get the
// documented defaults, negative MaxRestarts and MaxSamplingPerCall mean
// none, other negative fields their default, and a huge
// MaxSamplingPerCall is capped.
func TestLimitsResolve(t *testing.T) {
	t.Parallel()
	defaults := limits{maxConc: 16, maxCalls: 256, maxTools: 10_000, maxBytes: 64 << 20, maxRestarts: 5,
		restartBackoff: time.Second, relistInterval: 10 * time.Second, maxSamples: 10}
	tests := []struct {
		name string
		in   *Limits
		want limits
	}{
		{"nil", nil, defaults},
		{"zero", &Limits{}, defaults},
		{"negative", &Limits{MaxConcurrency: -1, MaxBatchCalls: -1, MaxToolsPerRun: -1, MaxListBytesPerRun: -1, MaxRestarts: -1,
			RestartBackoff: -1, MinRelistInterval: -1, MaxSamplingPerCall: -1},
			limits{maxConc: 16, maxCalls: 256, maxTools: 10_000, maxBytes: 64 << 20, maxRestarts: 0,
				restartBackoff: time.Second, relistInterval: 10 * time.Second, maxSamples: 0}},
		{"set", &Limits{MaxConcurrency: 2, MaxBatchCalls: 3, MaxToolsPerRun: 4, MaxListBytesPerRun: 5, MaxRestarts: 6,
			RestartBackoff: 7, MinRelistInterval: 8, MaxSamplingPerCall: 1<<30 + 1},
			limits{maxConc: 2, maxCalls: 3, maxTools: 4, maxBytes: 5, maxRestarts: 6, restartBackoff: 7, relistInterval: 8, maxSamples: 1 << 30}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.in.resolve(), cmp.AllowUnexported(limits{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
