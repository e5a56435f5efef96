package convtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/internal/runtest"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// Answer is one scripted answer of an API: its HTTP status (0 means 200)
// and its JSON body.
type Answer struct {
	Status int
	Body   string
}

// API is a model API scripted on 127.0.0.1: each request, whatever its
// path, gets the next Answer, in order; a request past the script gets a
// 500. It keeps the body of every request. Close it when done.
type API struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []Answer
	requests [][]byte
}

// NewAPI starts an API that answers with answers.
func NewAPI(answers ...Answer) *API {
	a := &API{answers: answers}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	return a
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	a.mu.Lock()
	n := len(a.requests)
	a.requests = append(a.requests, body)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if n >= len(a.answers) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"past the script","type":"server_error","code":null,"param":null}}`)
		return
	}
	if s := a.answers[n].Status; s != 0 {
		w.WriteHeader(s)
	}
	_, _ = io.WriteString(w, a.answers[n].Body)
}

// Requests are the bodies of the requests the API got, in order.
func (a *API) Requests() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([][]byte(nil), a.requests...)
}

// ExampleRun starts, for an Example (which has no testing.TB), a Run of
// the agent "writer" from a host in a new temporary directory. The agent
// mounts "notes", the bundled fake MCP server (mcptest) in memory with
// its client-feature tools (mcptest.FaultClientFeatures: sample, ask, …),
// and may call every tool (policy.AutoAllow, unless opts.Permission is
// set). opts completes the Run's options; done closes
// the Run and the host and removes the directory.
func ExampleRun(ctx context.Context, opts run.Options) (r *run.Run, done func(), err error) {
	dir, err := os.MkdirTemp("", "agt-example-")
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error, closers ...func() error) (*run.Run, func(), error) {
		for _, c := range closers {
			_ = c()
		}
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	dial := mcptest.Dial(&mcptest.ServerOptions{Faults: []mcptest.Fault{mcptest.FaultClientFeatures}})
	host, err := agt.Open(ctx, dir, &agt.Options{Connector: &mcpconn.ConnectorOptions{Dial: dial}})
	if err != nil {
		return fail(err)
	}
	for _, w := range []resource.WriteRequest{
		{Kind: resource.KindMCP, Ref: "notes", Create: true, Data: []byte(`{"mcpServers": {"notes": {"command": "fakemcp", "cwd": "/"}}}`)},
		{Kind: resource.KindAgent, Ref: "writer", Create: true, Data: []byte(`{"mcps": ["notes"]}`)},
	} {
		if _, err := host.Resources().Write(ctx, resource.Direct(), w); err != nil {
			return fail(err, host.Close)
		}
	}
	if opts.Permission == nil {
		opts.Permission = policy.AutoAllow()
	}
	r, err = host.NewRun(ctx, "writer", &opts)
	if err != nil {
		return fail(err, host.Close)
	}
	return r, func() { _ = r.Close(); _ = host.Close(); _ = os.RemoveAll(dir) }, nil
}

// Eras are the protocol eras of the fake server every test that touches
// a server runs in: 2025-11-25 only, and both (a modern client speaks
// 2026-07-28).
var Eras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual}

// FeaturesRun starts a Run (runtest.New, closed in t.Cleanup) of
// runtest.Agent, which mounts runtest.Notes: the fake server of era e,
// in memory, with its client-feature tools (mcptest.ToolSample, …).
// opts.Permission nil allows every call.
func FeaturesRun(t testing.TB, e mcptest.Era, opts run.Options) *run.Run {
	t.Helper()
	if opts.Permission == nil {
		opts.Permission = policy.AutoAllow()
	}
	dial := runtest.Dial(&mcptest.ServerOptions{Era: e, Faults: []mcptest.Fault{mcptest.FaultClientFeatures}})
	return runtest.New(t, runtest.Repository(t), dial, opts)
}
