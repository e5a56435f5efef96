package run_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/run"
	"github.com/google/go-cmp/cmp"
)

// Issue 11 (5): one call's validation can no longer take most of a minute.
// 31 strings of about 32 KB against a large unanchored pattern took 42.8 s
// under a 5 s deadline. The call's deadline now stops validation with
// deadline_exceeded (each match takes about a second), and the handler
// never runs. (Without a deadline the call is refused as too expensive to
// check after about two seconds: toolschema's TestValidationWorkBounded.)
func TestExecuteValidationBounded(t *testing.T) {
	t.Parallel()
	repo, mem := setup(t)
	var ran atomic.Int64
	const pattern = `(?:[\\p{L}\\p{N}]{1,1000})x`
	r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector(), HostTools: []run.HostTool{{
		Name:   "costly",
		Schema: json.RawMessage(`{"type":"object","properties":{"s":{"type":"array","items":{"type":"string","pattern":"` + pattern + `"}}}}`),
		Handler: func(context.Context, run.Request) (run.Result, error) {
			ran.Add(1)
			return run.Result{}, nil
		},
	}}})
	// As long as one match may be (toolschema's default MaxPatternWork,
	// 1 << 26, over the pattern's 2002 instructions): about a second each.
	const defaultMaxPatternWork = 1 << 26
	one := `"` + strings.Repeat("a", defaultMaxPatternWork/2002) + `"`
	args := `{"s":[` + strings.Repeat(one+",", 30) + one + `]}`

	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	out, err := r.Execute(ctx, batch(call("a", "costly", args)))
	elapsed := time.Since(start)
	if err != context.DeadlineExceeded {
		t.Errorf("Execute error %v, want the context's", err)
	}
	if got := codes(out); !cmp.Equal(got, []run.Code{run.CodeDeadlineExceeded}) {
		t.Errorf("codes %v, want deadline_exceeded (%+v)", got, out.Results)
	}
	t.Logf("deadline %v: Execute returned after %v (over by %v)", deadline, elapsed, elapsed-deadline)
	if elapsed > deadline+slack {
		t.Errorf("deadline %v: Execute returned after %v", deadline, elapsed)
	}

	// Canceled while validating: canceled, as anywhere else.
	cctx, ccancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(200*time.Millisecond, ccancel)
	defer timer.Stop()
	start = time.Now()
	out, _ = r.Execute(cctx, batch(call("b", "costly", args)))
	if got := codes(out); !cmp.Equal(got, []run.Code{run.CodeCanceled}) {
		t.Errorf("canceled: codes %v, want canceled (%+v)", got, out.Results)
	}
	if elapsed := time.Since(start); elapsed > 200*time.Millisecond+slack {
		t.Errorf("canceled after 200ms: Execute returned after %v", elapsed)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the handler ran %d times", n)
	}
}

// Issue 11 (6): text that is not valid Unicode never reaches a server. An
// overlong "/" (C0 AF), an encoded surrogate and a lone surrogate escape
// passed maxLength and pattern and were forwarded byte for byte; each is now
// invalid_arguments at the string's path, without the value.
func TestExecuteRefusesInvalidText(t *testing.T) {
	t.Parallel()
	inEras(t, func(t *testing.T, e mcptest.Era) {
		repo, mem := setupEra(t, e, notes)
		r := newRun(t, &run.Options{Repository: repo, Connector: mem.connector()})
		for i, args := range []string{"{\"text\":\"\xc0\xaf\"}", "{\"text\":\"\xed\xa0\x80\"}", `{"text":"\ud800"}`} {
			out, err := r.Execute(context.Background(), batch(call("a", echo, args)))
			if err != nil || len(out.Results) != 1 {
				t.Fatalf("%d: Execute: %v %+v", i, err, out)
			}
			res := out.Results[0]
			if res.Code != run.CodeInvalidArguments || len(res.Violations) != 1 || res.Violations[0].Path != "/text" {
				t.Errorf("%d: %s %v, want invalid_arguments at /text", i, res.Code, res.Violations)
			}
			if body := string(res.ForModel()); strings.Contains(body, "\xc0") || strings.Contains(body, "\xed") || strings.Contains(body, `\ud800`) || strings.Contains(body, `\ufffd`) {
				t.Errorf("%d: the answer holds the value: %s", i, body)
			}
		}
		if n := mem.counters.Calls(); n != 0 {
			t.Errorf("the server got %d calls", n)
		}
	})
}
