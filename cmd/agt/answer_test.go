package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/toolschema"
)

// samplerEnv makes the test binary a --sampling-command: its value is the
// mode (serveSampling).
const samplerEnv = "AGT_TEST_SAMPLER"

// samplerPIDEnv names a file the sampler writes its process id to.
const samplerPIDEnv = "AGT_TEST_SAMPLER_PID"

// serveSampling is the test binary as a sampling command: "answer" reads
// the request and answers with the number of its messages, "hang" waits
// until killed, "flood" writes 2 MiB, "fail" writes to stderr and exits 3.
func serveSampling(mode string) int {
	if f := os.Getenv(samplerPIDEnv); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	switch mode {
	case "answer":
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			return 3
		}
		fmt.Printf(`{"role":"assistant","content":{"type":"text","text":"sampled %d messages"},"model":"test"}`, len(req.Messages))
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		wait := make(chan os.Signal, 1)
		signal.Notify(wait, syscall.SIGUSR1) // never sent: killed first
		<-wait
	case "flood":
		chunk := strings.Repeat("x", 64<<10)
		for range 32 {
			fmt.Print(chunk)
		}
	case "fail":
		fmt.Fprintln(os.Stderr, "boom: no model here")
		return 3
	}
	return 0
}

// registerClientFeatures registers the fake with the client-features
// tools in era e and mounts it on agent a1.
func registerClientFeatures(t *testing.T, e mcptest.Era) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "agt.db")
	registerFake(t, db, "fake", "-era", string(e), "-fault", string(mcptest.FaultClientFeatures))
	mustRun(t, db, 0, "agent", "create", "a1", "--mcp", "fake")
	return db
}

// issue 29 item 2: sampling is answered by --sampling-command (or
// $AGT_SAMPLING_COMMAND) only; without one, and when the command fails,
// hangs or floods, the server is refused and stderr says why. The command
// is killed at its timeout.
func TestSamplingByCommand(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		mode       string
		byEnv      bool
		flags      []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{name: "none", code: 1, wantStdout: "sampling", wantStderr: "it answers sampling only with --sampling-command COMMAND (or $AGT_SAMPLING_COMMAND)"},
		{name: "answer", mode: "answer", code: 0, wantStdout: "model said: sampled 2 messages"},
		{name: "answer by env", mode: "answer", byEnv: true, code: 0, wantStdout: "model said: sampled 2 messages"},
		{name: "fail", mode: "fail", code: 1, wantStdout: "the sampling command of agt failed", wantStderr: "| boom: no model here"},
		{name: "flood", mode: "flood", code: 1, wantStdout: "wrote more than 1048576 bytes", wantStderr: "wrote more than 1048576 bytes"},
		{name: "hang", mode: "hang", flags: []string{"--sampling-timeout", "1s"}, code: 1, wantStdout: "did not finish within --sampling-timeout 1s", wantStderr: "did not finish within --sampling-timeout 1s"},
	}
	for _, e := range eras {
		db := registerClientFeatures(t, e)
		for _, tt := range tests {
			t.Run(string(e)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				pidFile := filepath.Join(t.TempDir(), "pid")
				env := []string{samplerEnv + "=" + tt.mode, samplerPIDEnv + "=" + pidFile}
				args := []string{"agent", "call", "a1", "mcp__fake__sample", `{"messages":2}`, "--yes"}
				switch {
				case tt.mode != "" && tt.byEnv:
					env = append(env, samplingCommandVar+"="+self)
				case tt.mode != "":
					args = append(args, "--sampling-command", self)
				}
				r := runAgtEnv(t, env, db, "", append(args, tt.flags...)...)
				if r.code != tt.code || !strings.Contains(r.stdout, tt.wantStdout) || !strings.Contains(r.stderr, tt.wantStderr) {
					t.Errorf("exit %d (want %d)\nstdout (want %q):\n%s\nstderr (want %q):\n%s", r.code, tt.code, tt.wantStdout, r.stdout, tt.wantStderr, r.stderr)
				}
				if b, err := os.ReadFile(pidFile); err == nil {
					pid, _ := strconv.Atoi(string(b))
					if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
						t.Errorf("the sampling command (pid %d) outlived agt: kill 0 = %v", pid, err)
					}
				}
			})
		}
	}
}

// issue 29 item 2: a usage error names the flag of a sampling command
// that cannot run, and of a root that is no directory.
func TestAnswerFlagErrors(t *testing.T) {
	t.Parallel()
	db := registerClientFeatures(t, mcptest.EraLegacy)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	assertUsageErrors(t, db, []usageCase{
		{"sampling command missing", []string{"agent", "call", "a1", "mcp__fake__sample", "{}", "--sampling-command", "/nonexistent/model"}, "--sampling-command: the program /nonexistent/model is not found"},
		{"root a file", []string{"agent", "tools", "a1", "--root", file}, ": not a directory"},
		{"root missing", []string{"agent", "call", "a1", "mcp__fake__list_roots", "{}", "--root", filepath.Join(file, "gone")}, "not a directory"},
	})
}

// issue 29 item 2: the servers get --root's directories as file://
// roots, else the current directory, in both eras.
func TestRootsFromFlags(t *testing.T) {
	t.Parallel()
	d1, d2, wd := t.TempDir(), t.TempDir(), t.TempDir()
	uri := func(d string) string { return (&url.URL{Scheme: "file", Path: d}).String() }
	tests := []struct {
		name  string
		flags []string
		want  []string
	}{
		{"flags", []string{"--root", d1, "--root", d2}, []string{uri(d1), uri(d2)}},
		{"current directory", nil, []string{uri(wd)}},
	}
	for _, e := range eras {
		db := registerClientFeatures(t, e)
		for _, tt := range tests {
			t.Run(string(e)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				cmd := agtCommand(t.Context(), t, nil, db, append([]string{"agent", "call", "a1", "mcp__fake__list_roots", "{}", "--yes"}, tt.flags...)...)
				cmd.Dir = wd
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("agent call list_roots: %v\n%s", err, out)
				}
				var res []struct{ Text string }
				if err := json.Unmarshal(out, &res); err != nil || len(res) != 1 {
					t.Fatalf("result %s: %v", out, err)
				}
				var got []string
				if err := json.Unmarshal([]byte(res[0].Text), &got); err != nil {
					t.Fatalf("roots %q: %v", res[0].Text, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("roots (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// issue 29 item 2: without a person to answer (--yes, no terminal), a
// server's elicitation is declined, and stderr says how to answer it;
// progress prints nothing on a pipe.
func TestElicitationDeclinedWithoutTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		tool, args string
		wantStdout string
		wantStderr string
		legacyOnly bool
	}{
		{"form", "mcp__fake__ask", `{}`, `\"action\":\"decline\"`, "agt declined it: --yes answers no question; run the call on a terminal without --yes to answer it", false},
		{"url", "mcp__fake__ask", `{"mode":"url"}`, `\"action\":\"decline\"`, "asks for input: Sign in", false},
		{"progress", "mcp__fake__progress", `{"steps":3,"ms":1}`, "steps=3", "", false},
		// ask_many sends server requests, which only the legacy era has:
		// 4 at once, one more than the notes a call prints, and no more
		// than mcpconn answers at once (Limits.MaxServerRequests), so
		// none is refused however slowly the machine answers.
		{"many", "mcp__fake__ask_many", `{"count":4}`, "answered=4 refused=0", "agt declines the further requests for input of this call without a note", true},
	}
	for _, e := range eras {
		db := registerClientFeatures(t, e)
		for _, tt := range tests {
			if tt.legacyOnly && e != mcptest.EraLegacy {
				continue
			}
			t.Run(string(e)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				r := mustRun(t, db, 0, "agent", "call", "a1", tt.tool, tt.args, "--yes")
				if !strings.Contains(r.stdout, tt.wantStdout) || !strings.Contains(r.stderr, tt.wantStderr) {
					t.Errorf("stdout (want %q):\n%s\nstderr (want %q):\n%s", tt.wantStdout, r.stdout, tt.wantStderr, r.stderr)
				}
				if strings.Contains(r.stderr, "progress") || strings.ContainsAny(r.stderr, "\r\x1b") {
					t.Errorf("a pipe got progress or terminal controls:\n%q", r.stderr)
				}
				if n := strings.Count(r.stderr, "agt declined it"); n > maxDeclineNotes {
					t.Errorf("%d notes of declined requests, want at most %d:\n%s", n, maxDeclineNotes, r.stderr)
				}
			})
		}
	}
}

// issue 29 item 2: server-everything lists its elicitation and roots
// tools to agent tools, and its sampling tool when a command answers
// sampling, as it does to a host with handlers.
func TestEverythingToolsSeeClientFeatures(t *testing.T) {
	t.Parallel()
	node, script := runtest.Node(t, "../..", "@modelcontextprotocol/server-everything/dist/index.js")
	db := filepath.Join(t.TempDir(), "agt.db")
	mustRun(t, db, 0, "mcp", "create", "ev", "--command", node, "--arg", script, "--arg", "stdio", "--cwd", t.TempDir())
	mustRun(t, db, 0, "agent", "create", "a1", "--mcp", "ev")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		flags   []string
		want    []string
		without []string
	}{
		{nil, []string{"mcp__ev__get-roots-list", "mcp__ev__trigger-elicitation-request"}, []string{"mcp__ev__trigger-sampling-request"}},
		{[]string{"--sampling-command", self}, []string{"mcp__ev__get-roots-list", "mcp__ev__trigger-elicitation-request", "mcp__ev__trigger-sampling-request"}, nil},
	}
	for _, tt := range tests {
		r := mustRun(t, db, 0, append([]string{"agent", "tools", "a1", "--json"}, tt.flags...)...)
		var rep struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range rep.Tools {
			names[tool.Name] = true
		}
		for _, n := range tt.want {
			if !names[n] {
				t.Errorf("agent tools %v: %s missing from %d tools", tt.flags, n, len(names))
			}
		}
		for _, n := range tt.without {
			if names[n] {
				t.Errorf("agent tools %v lists %s", tt.flags, n)
			}
		}
	}
}

// issue 29 item 2: a typed answer becomes a value of the field's type;
// choices are picked by number, value or title (enum, enumNames, titled
// oneOf, multi-select anyOf items); a misfit says what to type, without
// repeating it; each value is then checked against the field's schema.
func TestFormAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, line string
		want               any
		why                string
	}{
		{"integer", `{"type":"integer","minimum":1}`, "41", int64(41), ""},
		{"integer misfit", `{"type":"integer"}`, "4.5", nil, "type a whole number"},
		{"integer below minimum", `{"type":"integer","minimum":1}`, "0", nil, "the value must be >= 1"},
		{"number", `{"type":"number"}`, "2.5", 2.5, ""},
		{"number not finite", `{"type":"number"}`, "Inf", nil, "type a number"},
		{"boolean", `{"type":"boolean"}`, "Yes", true, ""},
		{"boolean misfit", `{"type":"boolean"}`, "maybe", nil, "answer y or n"},
		{"string too long", `{"type":"string","maxLength":3}`, "abcd", nil, "the value must be at most 3 characters long"},
		{"enum by number", `{"type":"string","enum":["a","b"]}`, "2", "b", ""},
		{"enum by title", `{"type":"string","enum":["a","b"],"enumNames":["Alpha","Beta"]}`, "Beta", "b", ""},
		{"enum misfit", `{"type":"string","enum":["a","b"]}`, "c", nil, "pick one of the numbered choices"},
		{"titled oneOf", `{"type":"string","oneOf":[{"const":"x","title":"Ex"},{"const":"y","title":"Why"}]}`, "Why", "y", ""},
		{"multi-select", `{"type":"array","items":{"type":"string","enum":["r","g","b"]}}`, "1, b", []any{"r", "b"}, ""},
		{"multi-select anyOf", `{"type":"array","items":{"anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}}`, "Green", []any{"g"}, ""},
		{"multi-select misfit", `{"type":"array","items":{"type":"string","enum":["r"]}}`, "r, q", nil, "each item must be one of the numbered choices"},
		{"multi-select too many", `{"type":"array","maxItems":1,"items":{"type":"string","enum":["r","g"]}}`, "r,g", nil, "the value must have at most 1 items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fields, err := formFields(map[string]any{"type": "object", "properties": map[string]json.RawMessage{"f": json.RawMessage(tt.schema)}})
			if err != nil || len(fields) != 1 {
				t.Fatalf("formFields: %v", err)
			}
			f := fields[0]
			kind := f.schema.Type
			v, why := parseAnswer(kind, tt.line, f.choices)
			if why == "" {
				compiled, err := toolschema.CompileSchema(f.raw, nil)
				if err != nil {
					t.Fatal(err)
				}
				why = violationText(compiled, v)
			}
			if why != "" {
				v = nil
			}
			if diff := cmp.Diff(tt.want, v); diff != "" || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
				t.Errorf("answer %q: value (-want +got):\n%s why %q, want %q", tt.line, diff, why, tt.why)
			}
		})
	}
}
