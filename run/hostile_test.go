//go:build unix

package run_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
)

// Issue 23 item 10, through Runs: two Runs share a server whose listing
// holds a tool nested too deep, whose deep_result answers 100,000 levels
// deep, and whose null_id_error sends an error with a null id first. Each
// Run offers the other 24 tools (the one left out is a SkippedTool with
// the reason); the deep result fails its call alone, the null id is
// dropped and the call gets its result; the other Run's calls and the
// next batch work on the same process: no Run lost its mount, none
// restarted it (before: 0 of 25 tools, and each attack cost both Runs the
// server until a restart).
func TestHostileContentCostsOneCall(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	refs, tags := sharedMounts(t, repo, 1, true, "-fault", string(mcptest.FaultHostileContent))
	ref := refs[0]
	c := sharingConnector(t)
	a := newRun(t, &run.Options{Repository: repo, Connector: c})
	b := newRun(t, &run.Options{Repository: repo, Connector: c})
	pids := liveProcesses(func(cmdline string) bool { return strings.Contains(cmdline, tags[0]) })
	if len(pids) != 1 {
		t.Fatalf("%d server processes; want 1", len(pids))
	}
	for name, r := range map[string]*run.Run{"a": a, "b": b} {
		if len(r.MountErrors()) != 0 {
			t.Fatalf("Run %s: mount errors %v", name, r.MountErrors())
		}
		mcpTools := 0
		for _, ti := range r.Tools() {
			if ti.Source.Ref == ref {
				mcpTools++
			}
		}
		skipped := r.SkippedTools()
		if mcpTools != mcptest.HostileContentTools-1 || len(skipped) != 1 || skipped[0].Source.Tool != mcptest.ToolDeepOutputSchema ||
			!errors.Is(skipped[0].Err, mcpconn.ErrLimit) || !strings.Contains(skipped[0].Err.Error(), "MaxMessageDepth") {
			t.Errorf("Run %s: %d tools of %s, skipped %+v; want %d and %s left out naming MaxMessageDepth",
				name, mcpTools, ref, skipped, mcptest.HostileContentTools-1, mcptest.ToolDeepOutputSchema)
		}
	}

	noRestart := func(who string, out run.Outcome) {
		t.Helper()
		if out.Refresh != nil && (len(out.Refresh.Restarted) > 0 || len(out.Refresh.Failures) > 0) {
			t.Errorf("%s: refresh %+v; want no restart", who, out.Refresh)
		}
	}
	out, err := a.Execute(context.Background(), batch(
		call("deep", run.Alias(ref, mcptest.ToolDeepResult), `{}`),
		call("null", run.Alias(ref, mcptest.ToolNullIDError), `{}`)))
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Results[0]; res.Code != run.CodeToolError || !strings.Contains(res.Message, "MaxMessageDepth") {
		t.Errorf("the deep result: %s; want a tool_error naming MaxMessageDepth", res.ToolError())
	}
	if res := out.Results[1]; res.Failed() || !strings.Contains(string(res.Content), `"ok"`) {
		t.Errorf("the call after an error with a null id: %s %s; want its result", res.ToolError(), res.Content)
	}
	noRestart("a, the attacks' batch", out)

	for _, step := range []struct {
		who string
		r   *run.Run
	}{{"b, after a's attacks", b}, {"a, the next batch", a}} {
		out, err := step.r.Execute(context.Background(), batch(call("p", run.Alias(ref, mcptest.ToolPlain), `{}`)))
		if err != nil || out.Results[0].Failed() {
			t.Errorf("%s: %v %s; want the call to work", step.who, err, out.Results[0].ToolError())
		}
		noRestart(step.who, out)
	}
	if now := liveProcesses(func(cmdline string) bool { return strings.Contains(cmdline, tags[0]) }); !slices.Equal(now, pids) {
		t.Errorf("server processes %v after the attacks; want the same one, %v", now, pids)
	}
}
