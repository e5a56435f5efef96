package mcpconn_test

import (
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/google/go-cmp/cmp"
)

// Issue 27 item 1: the limits grouped in Limits keep the defaults the
// constants they replace had, and a zero field means its default.
func TestDefaultLimits(t *testing.T) {
	t.Parallel()
	want := mcpconn.Limits{
		MaxTools: 10000, MaxListBytes: 32 << 20, MaxMessageBytes: 16 << 20, MaxServerMessageRate: 1000,
		ReconnectBurst: 10, MinReconnectInterval: time.Second, MaxReconnectDelay: 30 * time.Second,
		MaxCallDuration: 10 * time.Minute, MaxInputRounds: 10,
		MinTaskPollInterval: time.Second, MaxTaskPollInterval: 30 * time.Second, TaskTTL: time.Hour,
		MaxServerRequests: 4, MaxServerRequestTime: 10 * time.Minute, MaxElicitationBytes: 64 << 10,
		MaxSamplingMessages: 100, MaxSamplingBytes: 1 << 20, MaxNotificationBytes: 8 << 10,
		EraProbeTimeout: 2 * time.Second, MaxListingTTL: 10 * time.Minute, SharedIdleTimeout: 30 * time.Second,
		TerminateGrace: 2 * time.Second, StderrTailBytes: 8 << 10,
	}
	if diff := cmp.Diff(want, mcpconn.DefaultLimits()); diff != "" {
		t.Errorf("DefaultLimits() (-want +got):\n%s", diff)
	}
}
