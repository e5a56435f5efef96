package agt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
)

// The static test and a probe resolve a bare command by one rule, in the
// PATH the server gets: with only HOME inherited, a command found in the
// host's PATH is not found by either; with PATH inherited, both find it.
func TestStaticTestAndProbeAgreeOnTheCommand(t *testing.T) {
	// t.Setenv: the host's PATH holds the server, as an operator's would.
	exe := mcptest.Command(t)
	t.Setenv("PATH", filepath.Dir(exe)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	data := `{"mcpServers": {"fake": {"command": "` + filepath.Base(exe) + `", "cwd": "` + filepath.ToSlash(t.TempDir()) + `"}}}`
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		inherit []string
		wantOK  bool
	}{
		{name: "HOME only", inherit: []string{"HOME"}, wantOK: false},
		{name: "PATH and HOME", inherit: []string{"PATH", "HOME"}, wantOK: true},
		{name: "the default list", inherit: nil, wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := agt.Open(ctx, filepath.Join(t.TempDir(), "agt.db"), &agt.Options{
				Connector: &mcpconn.ConnectorOptions{LaunchEnv: &resource.LaunchEnv{Inherit: tc.inherit}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			write(t, h, resource.KindMCP, "fake", data)

			rep, err := h.Resources().Test(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "fake"})
			if err != nil {
				t.Fatal(err)
			}
			probe, perr := h.Prober().Probe(ctx, "fake")
			if rep.OK != tc.wantOK || (probe != nil && probe.OK) != tc.wantOK {
				t.Fatalf("static test ok=%v (%v), probe ok=%v (%v); want both %v", rep.OK, rep.Findings, probe != nil && probe.OK, perr, tc.wantOK)
			}
			if !tc.wantOK {
				if len(rep.Findings) != 1 || rep.Findings[0].Code != findcode.CommandMissing || rep.Findings[0].Field != "/mcpServers/fake/command" {
					t.Errorf("static findings = %v; want one command_not_found at the command", rep.Findings)
				} else if fix := rep.Findings[0].Fix; !strings.Contains(fix, "(mcpconn.ConnectorOptions.LaunchEnv.Inherit)") {
					// The host set the Connector's: the Service's fix names it.
					t.Errorf("static fix %q does not name mcpconn.ConnectorOptions.LaunchEnv.Inherit", fix)
				}
				if !errors.Is(perr, mcpconn.ErrStart) {
					t.Errorf("probe error = %v; want ErrStart", perr)
				}
			}
		})
	}
}
