package contract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agtsdk/agt/contract"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.RemoveBuilt()
	os.Exit(code)
}

// eras are the protocol eras every test against the fake server runs in.
var eras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraModern}

// driftServer is the fake server with its drift tools, in one era.
func driftServer(t *testing.T, era mcptest.Era, args ...string) resource.MCPServer {
	t.Helper()
	return resource.MCPServer{Command: mcptest.Command(t), Cwd: t.TempDir(),
		Args: append([]string{"-era", string(era), "-fault", string(mcptest.FaultContractDrift)}, args...)}
}

var driftTools = []string{mcptest.ToolDriftLax, mcptest.ToolDriftStrict, mcptest.ToolDriftCrash, mcptest.ToolDriftHang,
	mcptest.ToolDriftLeak, mcptest.ToolDriftBusiness, mcptest.ToolDriftInternal}

// canary matches a generated value; no report may hold one.
var canary = regexp.MustCompile(`zq[0-9a-f]{8}`)

type finding struct {
	Tool, Case string
	Class      contract.Class
}

// The drifting server: every class of finding is found, where it is, in
// both eras, and the report holds no argument value.
func TestDriftServerEachClass(t *testing.T) {
	t.Parallel()
	business := []contract.Case{
		{Tool: mcptest.ToolDriftBusiness, Name: "known id", Arguments: json.RawMessage(`{"id":"` + mcptest.DriftKnownID + `"}`), Expect: contract.ExpectResult, Text: "found"},
		{Tool: mcptest.ToolDriftBusiness, Name: "unknown id", Arguments: json.RawMessage(`{"id":"xyz"}`), Expect: contract.ExpectError, Text: "not found"},
		{Tool: mcptest.ToolDriftBusiness, Name: "expects a result it does not get", Arguments: json.RawMessage(`{"id":"abc"}`), Expect: contract.ExpectResult},
		{Tool: mcptest.ToolDriftBusiness, Name: "expects another text", Arguments: json.RawMessage(`{"id":"known"}`), Expect: contract.ExpectResult, Text: "missing"},
	}
	want := []finding{
		{"drift_business", "business: expects a result it does not get", contract.Unexpected},
		{"drift_business", "business: expects another text", contract.Unexpected},
		{"drift_business", "valid: required fields only", contract.Business},
		{"drift_crash", "duplicate key /mode", contract.Tolerated},
		{"drift_crash", "valid: /mode enum value 2", contract.Crashed},
		{"drift_hang", "valid: required fields only", contract.TimedOut},
		{"drift_hang", "duplicate key /wait", contract.TimedOut},
		{"drift_internal", "valid: required fields only", contract.ProtocolError},
		{"drift_internal", "integer written with .0 /n", contract.ProtocolError},
		{"drift_lax", "duplicate key /count", contract.Tolerated},
		{"drift_lax", "invalid UTF-8 in a property name", contract.Tolerated},
		{"drift_lax", "lone surrogate in a property name", contract.Tolerated},
		{"drift_lax", "missing required /count", contract.Laxer},
		{"drift_lax", "wrong type /count (string)", contract.Laxer},
		{"drift_lax", "minimum past limit /count", contract.Laxer},
		{"drift_lax", "maximum past limit /count", contract.Laxer},
		{"drift_lax", "integer with a fraction /count", contract.Laxer},
		{"drift_lax", "wrong type /label (number)", contract.Laxer},
		{"drift_lax", "maxLength past limit /label", contract.Laxer},
		{"drift_lax", "maxLength past limit /label, astral code points", contract.Laxer},
		{"drift_lax", "unknown property", contract.Laxer},
		{"drift_leak", "valid: required fields only", contract.Leaked},
		{"drift_leak", "duplicate key /user", contract.Leaked},
		{"drift_leak", "maxLength at limit /user", contract.Leaked},
		{"drift_leak", "maxLength at limit /user, astral code points", contract.Business},
		{"drift_strict", "valid: required fields only", contract.Stricter},
		{"drift_strict", "invalid UTF-8 /text", contract.Tolerated},
		{"drift_strict", "lone surrogate /text", contract.Tolerated},
		{"drift_strict", "valid: optional /ratio present", contract.Stricter},
		{"drift_strict", "maxLength at limit /text", contract.Stricter},
		{"drift_strict", "maxLength at limit /text, astral code points", contract.Stricter},
	}
	type variant struct {
		name string
		era  mcptest.Era
		srv  func(t *testing.T) resource.MCPServer
	}
	variants := []variant{}
	for _, era := range eras {
		variants = append(variants, variant{string(era), era, func(t *testing.T) resource.MCPServer { return driftServer(t, era) }})
	}
	// Over streamable HTTP too: the raw bytes reach the server there as
	// well, and a crash ends every session of the process.
	variants = append(variants, variant{"modern over HTTP", mcptest.EraModern, func(t *testing.T) resource.MCPServer {
		return resource.MCPServer{URL: mcptest.StartHTTP(t, "-era", "modern", "-fault", string(mcptest.FaultContractDrift))}
	}})
	for _, v := range variants {
		era := v.era
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			rep, err := contract.Run(context.Background(), mcpconn.NewConnector(nil), "drift", v.srv(t), &contract.Options{
				Tools: driftTools, Business: business,
				CaseTimeout: 5 * time.Second, // drift_hang waits for it, twice; a slow machine must not make a normal call time out
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []finding
			for _, f := range rep.Findings {
				got = append(got, finding{f.Tool, f.Case, f.Class})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if rep.Passed() {
				t.Error("the report passes")
			}
			for _, c := range contract.AllClasses {
				if rep.Count(c) == 0 {
					t.Errorf("no case of class %s", c)
				}
			}
			if wantV := map[mcptest.Era]string{mcptest.EraLegacy: "2025-11-25", mcptest.EraModern: mcptest.ModernProtocolVersion}[era]; rep.ProtocolVersion != wantV {
				t.Errorf("protocol version %q, want %q", rep.ProtocolVersion, wantV)
			}
			var out bytes.Buffer
			for _, w := range []func(*bytes.Buffer) error{
				func(b *bytes.Buffer) error { return contract.WriteTable(b, rep) },
				func(b *bytes.Buffer) error { return contract.WriteJSON(b, rep) },
				func(b *bytes.Buffer) error { return contract.WriteJUnit(b, rep) },
			} {
				if err := w(&out); err != nil {
					t.Fatal(err)
				}
			}
			if v := canary.FindString(out.String()); v != "" {
				t.Errorf("the written report holds a generated argument value")
			}
		})
	}
}

// Only read-only tools are called by default, the plan says what will be
// called before any call, and naming a tool or IncludeWrites calls a tool
// that is not read-only.
func TestPlanReadOnlyByDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		opts        contract.Options
		wantTools   []contract.PlannedTool
		wantSkipped []string
	}{
		{name: "default", wantTools: []contract.PlannedTool{{Name: "drift_business", ReadOnly: true}, {Name: "drift_lax", ReadOnly: true}},
			wantSkipped: []string{"drift_write: not marked read-only (readOnlyHint): name it or include writes to call it"}},
		{name: "include writes", opts: contract.Options{IncludeWrites: true},
			wantTools: []contract.PlannedTool{{Name: "drift_business", ReadOnly: true}, {Name: "drift_lax", ReadOnly: true}, {Name: "drift_write"}}},
		{name: "named", opts: contract.Options{Tools: []string{"drift_write"}},
			wantTools:   []contract.PlannedTool{{Name: "drift_write"}},
			wantSkipped: []string{"drift_business: not named", "drift_lax: not named"}},
	}
	for _, tt := range tests {
		for _, era := range eras {
			t.Run(tt.name+"/"+string(era), func(t *testing.T) {
				t.Parallel()
				callLog := filepath.Join(t.TempDir(), "calls")
				srv := driftServer(t, era, "-call-log", callLog)
				srv.EnabledTools = []string{"drift_business", "drift_lax", "drift_write"}
				opts := tt.opts
				planned := 0
				opts.Plan = func(p contract.Plan) {
					planned++
					if b, _ := os.ReadFile(callLog); len(b) > 0 {
						t.Errorf("tools were called before the plan: %q", b)
					}
					var got []contract.PlannedTool
					for _, pt := range p.Tools {
						got = append(got, contract.PlannedTool{Name: pt.Name, ReadOnly: pt.ReadOnly})
					}
					if diff := cmp.Diff(tt.wantTools, got); diff != "" {
						t.Errorf("planned (-want +got):\n%s", diff)
					}
					var skipped []string
					for _, s := range p.Skipped {
						if s.Reason == "the registration leaves it out (enabled_tools, disabled_tools)" {
							if srv.ToolEnabled(s.Name) {
								t.Errorf("%s skipped: %s", s.Name, s.Reason)
							}
							continue
						}
						skipped = append(skipped, s.Name+": "+s.Reason)
					}
					if diff := cmp.Diff(tt.wantSkipped, skipped); diff != "" {
						t.Errorf("skipped (-want +got):\n%s", diff)
					}
				}
				rep, err := contract.Run(context.Background(), mcpconn.NewConnector(nil), "drift", srv, &opts)
				if err != nil {
					t.Fatal(err)
				}
				if planned != 1 {
					t.Errorf("Plan called %d times", planned)
				}
				calls, _ := os.ReadFile(callLog)
				called := map[string]bool{}
				for _, l := range strings.Fields(string(calls)) {
					called[l] = true
				}
				for _, pt := range tt.wantTools {
					if !called[pt.Name] {
						t.Errorf("%s planned, never called", pt.Name)
					}
					delete(called, pt.Name)
				}
				if len(called) > 0 {
					t.Errorf("called tools not planned: %v", called)
				}
				if len(rep.Tools) != len(tt.wantTools) {
					t.Errorf("%d tools in the report, want %d", len(rep.Tools), len(tt.wantTools))
				}
			})
		}
	}
}

func TestRunCannotStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		srv     func(t *testing.T, era mcptest.Era) resource.MCPServer
		opts    *contract.Options
		wantErr string
		// serverText is what the server wrote on stderr: in the Go
		// error, never in the report (an artifact).
		serverText string
	}{
		{name: "a named tool the server does not list", srv: func(t *testing.T, era mcptest.Era) resource.MCPServer { return driftServer(t, era) },
			opts: &contract.Options{Tools: []string{"no_such_tool"}}, wantErr: `names tools the server does not list: ["no_such_tool"]`},
		{name: "the server does not start", srv: func(t *testing.T, era mcptest.Era) resource.MCPServer {
			return resource.MCPServer{Command: mcptest.Command(t), Args: []string{"-era", string(era), "-fault", "exit-at-start"}, Cwd: t.TempDir()}
		}, wantErr: "contract: connecting to drift", serverText: "fault exit-at-start"},
		{name: "an invalid business case", srv: func(t *testing.T, era mcptest.Era) resource.MCPServer { return driftServer(t, era) },
			opts: &contract.Options{Business: []contract.Case{{Tool: "drift_lax", Name: "x", Expect: "maybe"}}}, wantErr: "Options.Business[0]: expect must be"},
	}
	for _, tt := range tests {
		for _, era := range eras {
			t.Run(tt.name+"/"+string(era), func(t *testing.T) {
				t.Parallel()
				rep, err := contract.Run(context.Background(), mcpconn.NewConnector(nil), "drift", tt.srv(t, era), tt.opts)
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if rep == nil || rep.Error != mcpconn.ErrorText(err, false) || rep.Passed() {
					t.Errorf("report %+v, want its Error set and not passed", rep)
				}
				if tt.serverText != "" {
					if !strings.Contains(err.Error(), tt.serverText) {
						t.Errorf("err = %v, want the server's stderr %q in it", err, tt.serverText)
					}
					if strings.Contains(rep.Error, tt.serverText) {
						t.Errorf("report Error %q holds the server's stderr", rep.Error)
					}
				}
			})
		}
	}
	if _, err := contract.Run(context.Background(), nil, "x", resource.MCPServer{}, nil); err == nil {
		t.Error("Run without a Connector: no error")
	}
}

// The whole check's Timeout stops it; the cases left are counted and the
// report fails.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			rep, err := contract.Run(context.Background(), mcpconn.NewConnector(nil), "drift", driftServer(t, era), &contract.Options{
				Tools: []string{mcptest.ToolDriftHang}, Timeout: 8 * time.Second, CaseTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed() || rep.Error == "" || len(rep.Tools) != 1 || rep.Tools[0].NotRun == 0 {
				t.Errorf("report %+v: want it stopped by the timeout with cases not run", rep)
			}
		})
	}
}

func TestReadCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		want    int
		wantErr string
	}{
		{name: "two cases", file: `{"cases":[{"tool":"a","name":"x","arguments":{"k":1},"expect":"result"},{"tool":"a","name":"y","expect":"error","text":"no"}]}`, want: 2},
		{name: "no cases", file: `{"cases":[]}`},
		{name: "an unknown field", file: `{"cases":[{"tool":"a","name":"x","expect":"result","args":{}}]}`, wantErr: "documented fields"},
		{name: "no tool", file: `{"cases":[{"name":"x","expect":"result"}]}`, wantErr: "cases[0]: tool is empty"},
		{name: "no name", file: `{"cases":[{"tool":"a","expect":"result"}]}`, wantErr: "cases[0]: name must be"},
		{name: "bad expect", file: `{"cases":[{"tool":"a","name":"x","expect":"ok"}]}`, wantErr: `expect must be "result" or "error"`},
		{name: "arguments not an object", file: `{"cases":[{"tool":"a","name":"x","expect":"result","arguments":[1]}]}`, wantErr: "arguments must be a JSON object"},
		{name: "a name twice", file: `{"cases":[{"tool":"a","name":"x","expect":"result"},{"tool":"a","name":"x","expect":"error"}]}`, wantErr: "cases[1]: name repeats"},
		{name: "not JSON", file: `cases:`, wantErr: "not a JSON object"},
		{name: "too large", file: `{"cases":[` + strings.Repeat(" ", 1<<20) + `]}`, wantErr: "over 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := contract.ReadCases(strings.NewReader(tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != tt.want {
				t.Fatalf("got %d cases, err %v; want %d", len(got), err, tt.want)
			}
		})
	}
	if _, err := contract.ReadCasesFile(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestIsValidationText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want bool
	}{
		{`validating "arguments": validating root: required: missing properties: ["q"]`, true},                         // go-sdk
		{`unmarshaling arguments: invalid character`, true},                                                            // go-sdk
		{`MCP error -32602: Input validation error: Invalid arguments for tool echo: [{"code":"invalid_type"}]`, true}, // TypeScript SDK
		{"Error executing tool add: 1 validation error for addArguments\nb\n  Input should be a valid integer", true},  // FastMCP, pydantic
		{`json: cannot unmarshal string into Go struct field In.n of type int`, true},
		{`invalid params: n`, true},
		{`not found: no record with that id`, false},
		{`permission denied: only the owner may delete`, false},
		{`insufficient stock: 3 left`, false},
	}
	for _, tt := range tests {
		if got := contract.IsValidationText(tt.text); got != tt.want {
			t.Errorf("IsValidationText(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// The JUnit XML is well formed and counts what the report holds.
func TestWriteJUnit(t *testing.T) {
	t.Parallel()
	rep := &contract.Report{Reference: "srv", Tools: []contract.ToolReport{
		{Name: "a", Cases: 3, Classes: map[contract.Class]int{contract.Accepted: 1, contract.Laxer: 1, contract.Business: 1}},
		{Name: "b", Error: "its input schema does not compile: <bad>"},
	}, Findings: []contract.Finding{
		{Tool: "a", Case: "maximum past limit /n", Class: contract.Laxer, Path: "/n", SchemaPath: "#/properties/n/maximum", Message: "the schema refuses & the server ran it"},
		{Tool: "a", Case: "valid", Class: contract.Business, Message: "refused by its rules"},
	}}
	var b bytes.Buffer
	if err := contract.WriteJUnit(&b, rep); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if got.Tests != 5 || got.Failures != 1 || got.Errors != 1 || len(got.Suites) != 2 {
		t.Errorf("tests=%d failures=%d errors=%d suites=%d, want 5, 1, 1, 2\n%s", got.Tests, got.Failures, got.Errors, len(got.Suites), b.String())
	}
	if f := got.Suites[0].Cases[1].Failure; f == nil || f.Type != "laxer" {
		t.Errorf("the laxer finding is not a failure of type laxer:\n%s", b.String())
	}
}

// A server's tool names and texts reach the table and the JUnit names and
// classnames without controls, line breaks, bidi overrides or separators,
// and bounded.
func TestWriteHostileNames(t *testing.T) {
	t.Parallel()
	const hostile = "evil\x1b[2J\u202etool\u2066x\u2069\u2028y\r\nz\u0085"
	long := strings.Repeat("é", 5000)
	rep := &contract.Report{Reference: "srv", Tools: []contract.ToolReport{
		{Name: hostile, Cases: 1, Classes: map[contract.Class]int{contract.Laxer: 1}},
		{Name: long, Cases: 1, Classes: map[contract.Class]int{contract.Accepted: 1}},
	}, Findings: []contract.Finding{
		{Tool: hostile, Case: "case " + hostile, Class: contract.Laxer, Path: "/" + hostile, Message: "m " + hostile},
	}}
	unsafe := regexp.MustCompile("[\x00-\x1f\x7f\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
	var table bytes.Buffer
	if err := contract.WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
		if unsafe.MatchString(line) {
			t.Errorf("a table line holds an unsafe character: %q", line)
		}
		if len(line) > 2000 {
			t.Errorf("a table line of %d bytes: a cell is not bounded", len(line))
		}
	}
	var junit bytes.Buffer
	if err := contract.WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, junit.String())
	}
	for _, s := range got.Suites {
		for _, name := range append([]string{s.Name}, func() (n []string) {
			for _, c := range s.Cases {
				n = append(n, c.Name, c.Classname)
			}
			return n
		}()...) {
			if unsafe.MatchString(name) || len(name) > 300 {
				t.Errorf("a JUnit name or classname is unsafe or unbounded: %q", name)
			}
		}
	}
}
