package runtest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The Runs' sessions with the in-process servers end with the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// New mounts the fake server the repository registers: a call of its
// echo tool comes back.
func TestNewServesTheFake(t *testing.T) {
	t.Parallel()
	r := New(t, Repository(t), Dial(nil), run.Options{Permission: policy.AutoAllow()})
	out, err := r.Execute(context.Background(), run.Batch{ID: "b", Agent: Agent, Calls: []run.Call{
		{ID: "c", Name: run.Alias(Notes, mcptest.ToolEcho), Arguments: json.RawMessage(`{"text":"hi"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Results[0]; res.Code != "" || !strings.Contains(string(res.Content), `"hi"`) {
		t.Errorf("echo: code %q, content %s", res.Code, res.Content)
	}
}

// HostRun gives an agent that may manage resources the framework tools;
// the registered broken server is not mounted, and Dial refuses it.
func TestHostRunManager(t *testing.T) {
	t.Parallel()
	dial := Dial(nil)
	r := HostRun(t, Repository(t, resource.CapabilityResourceManagement), dial, run.Options{Permission: policy.AutoAllow()})
	var names []string
	for _, ti := range r.Tools() {
		names = append(names, ti.Name)
	}
	if !slices.Contains(names, "resource_write") || !slices.Contains(names, run.Alias(Notes, mcptest.ToolEcho)) {
		t.Errorf("tools %q, want the framework's and the fake server's", names)
	}
	if _, err := dial(context.Background(), Broken, fakeServer(t).MCPServers["fake"]); !errors.Is(err, errBroken) {
		t.Errorf("Dial(broken) = %v, want errBroken", err)
	}
}
