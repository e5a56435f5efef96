package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agtsdk/agt/mcpconn/mcptest"
)

// agt mcp contract: the plan before anything runs, a finding per line,
// --json, --junit, business cases beside the server, and the exit status.
func TestContract(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "agt.db")
			cwd := t.TempDir()
			mustRun(t, db, 0, "mcp", "create", "drift", "--command", mcptest.Command(t), "--cwd", cwd,
				"--arg", "-era", "--arg", string(era), "--arg", "-fault", "--arg", "contract-drift",
				"--enabled-tools", "drift_lax,drift_business,drift_write")

			// The table: the plan first, then the tools, the findings and
			// the verdict; exit status 1 (drift_lax is laxer).
			r := mustRun(t, db, 1, "mcp", "contract", "drift")
			plan, _, _ := strings.Cut(r.stdout, "TOOL")
			for _, want := range []string{
				"will call drift_business:", "will call drift_lax:",
				"skip drift_write: not marked read-only (readOnlyHint): name it or include writes to call it",
			} {
				if !strings.Contains(plan, want) {
					t.Errorf("the plan lacks %q:\n%s", want, r.stdout)
				}
			}
			for _, want := range []string{"drift_lax  maximum past limit /count", "laxer", "#/properties/count/maximum", "FAIL: 2 tools"} {
				if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), strings.Join(strings.Fields(want), " ")) {
					t.Errorf("the table lacks %q:\n%s", want, r.stdout)
				}
			}
			if canaryRe.MatchString(r.stdout) {
				t.Errorf("the table holds a generated argument value:\n%s", r.stdout)
			}

			// A tool that agrees with its schema (its refusals are
			// business): exit status 0, with the business cases of
			// mcp-contract.json in the server's cwd.
			cases := `{"cases":[{"tool":"drift_business","name":"known","arguments":{"id":"known"},"expect":"result","text":"found"}]}`
			if err := os.WriteFile(filepath.Join(cwd, "mcp-contract.json"), []byte(cases), 0o600); err != nil {
				t.Fatal(err)
			}
			junit := filepath.Join(t.TempDir(), "contract.xml")
			r = mustRun(t, db, 0, "mcp", "contract", "drift", "--tool", "drift_business", "--json", "--junit", junit)
			var rep struct {
				Reference       string `json:"reference"`
				ProtocolVersion string `json:"protocol_version"`
				Tools           []struct {
					Name     string         `json:"name"`
					Classes  map[string]int `json:"classes"`
					Outcomes []struct {
						Case  string `json:"case"`
						Class string `json:"class"`
					} `json:"outcomes"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("--json: %v\n%s", err, r.stdout)
			}
			if rep.Reference != "drift" || len(rep.Tools) != 1 || rep.Tools[0].Name != "drift_business" || rep.ProtocolVersion == "" {
				t.Fatalf("--json report: %+v", rep)
			}
			if got := rep.Tools[0].Outcomes[0]; got.Case != "business: known" || got.Class != "accepted" {
				t.Errorf("the business case: %+v, want accepted", got)
			}
			if !strings.Contains(r.stderr, "business cases: 1 from "+filepath.Join(cwd, "mcp-contract.json")) || !strings.Contains(r.stderr, "will call drift_business") {
				t.Errorf("with --json the plan goes to stderr:\n%s", r.stderr)
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var suites struct {
				Tests    int `xml:"tests,attr"`
				Failures int `xml:"failures,attr"`
			}
			if err := xml.Unmarshal(b, &suites); err != nil || suites.Tests == 0 || suites.Failures != 0 {
				t.Errorf("--junit: %+v, %v\n%s", suites, err, b)
			}

			// Named, a tool that is not read-only is called.
			// (It is laxer: it runs an unknown property.)
			r = mustRun(t, db, 1, "mcp", "contract", "drift", "--tool", "drift_write", "--cases", filepath.Join(cwd, "mcp-contract.json"))
			if !strings.Contains(r.stdout, "will call drift_write: ") || !strings.Contains(r.stdout, "NOT read-only") ||
				!strings.Contains(r.stdout, "skip drift_business, drift_lax: not named") {
				t.Errorf("--tool drift_write:\n%s", r.stdout)
			}

			// Nothing planned (drift_write is not read-only and not
			// named): nothing is proved, exit status 1 with what to do.
			db2 := filepath.Join(t.TempDir(), "agt.db")
			mustRun(t, db2, 0, "mcp", "create", "writes", "--command", mcptest.Command(t), "--cwd", t.TempDir(),
				"--arg", "-era", "--arg", string(era), "--arg", "-fault", "--arg", "contract-drift", "--enabled-tools", "drift_write")
			r = mustRun(t, db2, 1, "mcp", "contract", "writes")
			if !strings.Contains(r.stdout, "FAIL: 0 tools") || !strings.Contains(r.stderr, "no case ran") ||
				!strings.Contains(r.stderr, "--tool") || !strings.Contains(r.stderr, "--include-writes") {
				t.Errorf("no tool planned:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
		})
	}
}

var canaryRe = regexp.MustCompile(`zq[0-9a-f]{8}`)

func TestContractUsage(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "agt.db")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "no ref", args: []string{"mcp", "contract"}, code: 2},
		{name: "bad max cases", args: []string{"mcp", "contract", "x", "--max-cases", "0"}, code: 2, want: "--max-cases and --case-timeout must be positive"},
		{name: "unknown ref", args: []string{"mcp", "contract", "nosuch"}, code: 1, want: "nosuch"},
		{name: "a cases file that is not there", args: []string{"mcp", "contract", "nosuch", "--cases", filepath.Join(t.TempDir(), "none.json")}, code: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, db, tt.code, tt.args...)
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, r.stderr)
			}
		})
	}
	if r := mustRun(t, db, 0, "mcp", "contract", "--help"); !strings.Contains(r.stdout+r.stderr, "readOnlyHint") {
		t.Errorf("--help does not explain the read-only default:\n%s%s", r.stdout, r.stderr)
	}
}
