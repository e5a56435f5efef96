package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
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
		"refreshed at the batch boundary: added [archive], removed []",
		"result    toolu_05 ok [text]",
		"notice    configuration saved, but load failed: ",
		"result    toolu_07 is_error unknown_tool [text]",
		"stop_reason end_turn",
		"== done: the model ended its turn after 5 requests",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("transcript:\n%s", out.String())
	}
}

func TestAnthropicHostRefusesArguments(t *testing.T) {
	t.Parallel()
	if err := run(context.Background(), []string{"extra"}, &bytes.Buffer{}); err == nil {
		t.Error("run with an argument: no error")
	}
}
