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
	os.Exit(m.Run())
}

// The quickstart runs the whole pipeline (SPEC R8.3 in miniature) and says
// so step by step.
func TestQuickstart(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, nil, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"static check ok=true",
		"every schema compiles: true",
		"c1 failed: invalid_arguments",
		"/limit   must be >= 1  (schema #/properties/limit/minimum)",
		"tool calls the server has received so far: 0", // the bad call never reached it
		"c2 ok:",
		"the notes server process has exited: true", // unloaded at the boundary (R7.5)
		"tool calls the server has received so far: 1",
		`c5 ok: [{"type":"text","text":"still the old snapshot"}]`, // the old snapshot inside the batch
		"refreshed at the batch boundary: added [archive]",
		"c6 ok:",
		"refreshed at the batch boundary: added [], removed [notes]",
		"none is left from notes: true",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}

func TestQuickstartRefusesArguments(t *testing.T) {
	if err := run(context.Background(), []string{"extra"}, &bytes.Buffer{}); err == nil {
		t.Error("run with an argument: no error")
	}
}
