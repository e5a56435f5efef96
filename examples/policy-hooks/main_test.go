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
	// The example starts itself as the fake server: under test, itself is
	// this test binary.
	if len(os.Args) > 1 && os.Args[1] == serveFakeMCP {
		if err := serveFake(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// SPEC R4.2, R5.2, R5.3: rules and a person decide; invalid arguments reach
// neither; interceptors run only for allowed calls; the audit sees all.
func TestPolicyHooks(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var buf bytes.Buffer
	if err := run(ctx, nil, &buf); err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	out := buf.String()
	for _, want := range []string{
		`c1 mcp__notes__search: {"results":["alpha"]}`,
		`decision.by=rules decision.reason="allow rule mcp__notes__*"`,
		`msg="person asked" call=c2 alias=mcp__notes__note_create approved=true`,
		`c2 mcp__notes__note_create: {"id":"n1"}`,
		`msg="person asked" call=c3 alias=mcp__notes__note_create approved=false`,
		`c3 mcp__notes__note_create: {"error":{"code":"permission_denied"`,
		`c4 mcp__notes__note_delete: {"error":{"code":"permission_denied","message":"the call was not allowed (by rules): deny rule mcp__notes__note_delete"}}`,
		`stage=validate code=invalid_arguments violation_paths=[/owner]`,
		`msg=timed call=c1`,
		`msg=after call=c1 code=ok`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Order inside one call: the person before the interceptors, before
	// before after, after before the timing that wraps them.
	order := []string{`"person asked" call=c2`, `msg=before call=c2`, `msg=after call=c2`, `msg=timed call=c2`}
	last := -1
	for _, s := range order {
		i := strings.Index(out, s)
		if i < last {
			t.Errorf("%q comes before the previous stage", s)
		}
		last = i
	}
	// Denied and invalid calls never reach the interceptors; the invalid one
	// is not even asked about.
	for _, never := range []string{"msg=before call=c3", "msg=before call=c4", "msg=before call=c5", `"person asked" call=c5`, "Not An Owner"} {
		if strings.Contains(out, never) {
			t.Errorf("output contains %q", never)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}
