package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt/internal/runtest/poll"
)

func TestMain(m *testing.M) {
	// The example starts itself as the fake server; under test, "itself" is
	// this test binary, so it must answer the same argument.
	if len(os.Args) > 1 && os.Args[1] == serveFakeMCP {
		if err := serveFake(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// The whole loop runs against the scripted model, which refuses any
// request it does not expect; the transcript shows each step.
func TestAnthropicHost(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, nil, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"tool_use  toolu_01 mcp__notes__search",
		"tool_use  toolu_02 mcp__media__content",
		"result    toolu_01 ok [text]",
		"result    toolu_02 ok [image image/png]",
		"result    toolu_03 is_error permission_denied [text]",
		"refresh   ok: added [archive], removed []",
		"result    toolu_05 ok [text]",
		"result    toolu_06 ok [text, notice]",
		"refresh   failed: configuration saved, but load failed: mount broken",
		"result    toolu_07 is_error unknown_tool [text]",
		"tool_use  toolu_08 mcp__notes__sample",
		"result    toolu_08 ok [text]",
		"stop_reason end_turn",
		"== done: the model ended its turn after 6 requests, and answered 1 sampling request",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("transcript:\n%s", out.String())
	}
	// Every fake server the example started (four, one of which exited at
	// start) was stopped and reaped: no child of this process is left,
	// live or zombie.
	var left []string
	defer func() {
		if len(left) > 0 {
			t.Errorf("child processes left behind: %v", left)
		}
	}()
	poll.Until(t, "the fake servers to be reaped", func() bool {
		left = children(t)
		return len(left) == 0
	})
}

// children lists the processes whose parent is this one, by /proc (none
// where there is no /proc).
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	var found []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // not a process, or gone
		}
		// pid (comm) state ppid ...; comm may hold spaces: cut at the last ')'.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) >= 2 && f[1] == self {
			found = append(found, e.Name()+" "+f[0])
		}
	}
	return found
}

// A request the script does not expect (here: no tools at all) fails the
// SDK call with the scripted model's reason, and is remembered.
func TestScriptedModelRefusesTheUnexpected(t *testing.T) {
	t.Parallel()
	scripted := newScriptedModel()
	api := httptest.NewServer(scripted)
	defer api.Close()
	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(api.URL),
		option.WithAPIKey("not-a-key"), option.WithHTTPClient(api.Client()), option.WithMaxRetries(0))
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: model, MaxTokens: 1024, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	const want = "request 1: tool mcp__notes__search is not offered"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Messages.New: %v, want an error holding %q", err, want)
	}
	if f := scripted.failure(); f == nil || f.Error() != want {
		t.Errorf("failure() = %v, want %q", f, want)
	}
	if scripted.finished() || scripted.turns() != 0 {
		t.Errorf("a refused request counted as a turn: %d", scripted.turns())
	}
}

func TestAnthropicHostRefusesArguments(t *testing.T) {
	t.Parallel()
	if err := run(context.Background(), []string{"extra"}, &bytes.Buffer{}); err == nil {
		t.Error("run with an argument: no error")
	}
}

// The README gives the glue's size (the code lines of converse, between
// the glue markers of main.go): the figure stays true of the code.
func TestREADMEGlueFigure(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, glue, ok := strings.Cut(string(src), "// glue:begin")
	glue, _, ok2 := strings.Cut(glue, "// glue:end")
	if !ok || !ok2 {
		t.Fatal("main.go lacks the glue:begin and glue:end markers")
	}
	code := 0
	for line := range strings.SplitSeq(glue, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") {
			code++
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Its glue between agt and the API\s+is\s+(\d+)\s+lines`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README no longer gives the glue's size: update this test")
	}
	if got, _ := strconv.Atoi(string(m[1])); got != code {
		t.Errorf("the README says the glue is %d lines; main.go has %d between its markers", got, code)
	}
}
