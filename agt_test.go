package agt_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/framework"
	"github.com/agtsdk/agt/internal/runtest/need"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/policy"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/resource/pgrepo"
	"github.com/agtsdk/agt/run"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// inMemory makes servers run in this process, so facade tests need no
// binary.
var inMemory = inMemoryEra(mcptest.EraDual)

// eras are the protocol eras a test of a main flow runs in, each a
// parallel subtest (issue 25): a legacy server, which agt speaks
// 2025-11-25 to, and a dual-era one, which it speaks 2026-07-28 to.
var eras = []mcptest.Era{mcptest.EraLegacy, mcptest.EraDual}

// hostWithNotes is a Host serving in memory, with era e, the MCP
// resources notes and other; it is closed when the test ends.
func hostWithNotes(t *testing.T, e mcptest.Era) *agt.Host {
	t.Helper()
	h, err := agt.Open(context.Background(), t.TempDir(), inMemoryEra(e))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	write(t, h, resource.KindMCP, "notes", `{"mcpServers": {"notes": {"command": "fakemcp", "cwd": "/"}}}`)
	write(t, h, resource.KindMCP, "other", `{"mcpServers": {"other": {"command": "fakemcp", "cwd": "/"}}}`)
	return h
}

// inMemoryEra is inMemory with servers of era e.
func inMemoryEra(e mcptest.Era) *agt.Options {
	return &agt.Options{Connector: &mcpconn.ConnectorOptions{Dial: mcptest.Dial(&mcptest.ServerOptions{Era: e})}}
}

func write(t *testing.T, h *agt.Host, kind resource.Kind, ref resource.Ref, data string) {
	t.Helper()
	if _, err := h.Resources().Write(context.Background(), resource.Direct(), resource.WriteRequest{
		Kind: kind, Ref: ref, Create: true, Data: []byte(data),
	}); err != nil {
		t.Fatalf("write %s %s: %v", kind, ref, err)
	}
}

func TestOpenStorePaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	nested := filepath.Join(t.TempDir(), "a", "b", "store.db")
	newDir := filepath.Join(t.TempDir(), "c", "data")
	tests := []struct {
		name, store, wantFile string
	}{
		{"a directory holds agt.db", dir, filepath.Join(dir, agt.StoreFile)},
		{"a file path, parents created", nested, nested},
		{"a new directory with a trailing separator", newDir + string(filepath.Separator), filepath.Join(newDir, agt.StoreFile)},
	}
	for _, tt := range tests {
		h, err := agt.Open(ctx, tt.store, nil)
		if err != nil {
			t.Fatalf("%s: Open: %v", tt.name, err)
		}
		write(t, h, resource.KindAgent, "a", `{}`)
		if err := h.Close(); err != nil {
			t.Errorf("%s: Close: %v", tt.name, err)
		}
		if err := h.Close(); err != nil {
			t.Errorf("%s: second Close: %v", tt.name, err)
		}
		if _, err := os.Stat(tt.wantFile); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		// Reopened, the write is there.
		h, err = agt.Open(ctx, tt.store, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Resources().Read(ctx, resource.Direct(), resource.Key{Kind: resource.KindAgent, Ref: "a"}); err != nil {
			t.Errorf("%s: read after reopen: %v", tt.name, err)
		}
		h.Close()
	}
	if _, err := agt.Open(ctx, "", nil); err == nil {
		t.Error("Open with no store: no error")
	}
}

// New takes the caller's repository and leaves closing it to the caller.
func TestNewLeavesTheRepositoryOpen(t *testing.T) {
	t.Parallel()
	repo, err := boltrepo.Open(filepath.Join(t.TempDir(), "agt.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	h, err := agt.New(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Repository() != resource.Repository(repo) {
		t.Error("Repository() is not the repository given to New")
	}
	write(t, h, resource.KindAgent, "a", `{}`)
	h.Close()
	if _, err := repo.Get(context.Background(), resource.Key{Kind: resource.KindAgent, Ref: "a"}); err != nil {
		t.Errorf("the repository was closed by Host.Close: %v", err)
	}
}

func toolNames(r *run.Run) []string {
	var names []string
	for _, t := range r.Tools() {
		names = append(names, t.Name)
	}
	return names
}

// SPEC R3.6, R4.1: NewRun adds the framework tools, which only an agent that
// may manage resources sees, and the agent's own mounts; nothing else.
// Issue 27 item 1: a name in Options.FrameworkTools that is not a
// framework tool fails New and Open with an error naming the field (it
// panicked before), and Open creates no store for it.
func TestMisspelledFrameworkToolIsAnError(t *testing.T) {
	t.Parallel()
	opts := &agt.Options{FrameworkTools: []string{framework.ToolResourceRead, "resource_raed"}}
	const want = `agt: Options.FrameworkTools: framework: Options.Tools names "resource_raed", which is not a framework tool`
	h, err := agt.New(nil, opts) // the options fail before the repository is used
	if err == nil || h != nil || !strings.Contains(err.Error(), want) {
		t.Errorf("New = %v, %v; want nil and %q", h, err, want)
	}
	dir := filepath.Join(t.TempDir(), "store")
	h, err = agt.Open(context.Background(), dir+string(filepath.Separator), opts)
	if err == nil || h != nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open = %v, %v; want nil and %q", h, err, want)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open refused the options but the store's directory exists: %v", err)
	}
}

func TestNewRun(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := hostWithNotes(t, e)
			write(t, h, resource.KindAgent, "manager", `{"manager": true}`)
			write(t, h, resource.KindAgent, "worker", `{"mcps": ["notes"]}`)

			r, err := h.NewRun(ctx, "manager", &run.Options{Permission: policy.AutoAllow()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"agent_mcp_list", "mcp_probe", "resource_read", "resource_test", "resource_write"}, toolNames(r)); diff != "" {
				t.Errorf("manager's tools (-want +got):\n%s", diff)
			}
			r.Close()
			// The Host's Runs share one compiled-schema cache.
			if n := h.SchemaCache().Len(); n != len(toolNames(r)) {
				t.Errorf("the Host's schema cache holds %d schemas after a Run of %d tools", n, len(toolNames(r)))
			}

			// The Prober shares it too: the schemas a probe compiled are not
			// compiled again by a Run that mounts the server.
			cached := h.SchemaCache().Len()
			rep, err := h.Prober().Probe(ctx, "notes")
			if err != nil || !rep.OK {
				t.Fatalf("Probe: %v %+v", err, rep)
			}
			probed := h.SchemaCache().Len()
			if probed <= cached {
				t.Errorf("the Host's schema cache holds %d schemas after a probe, %d before", probed, cached)
			}

			r, err = h.NewRun(ctx, "worker", &run.Options{Permission: policy.AutoAllow()})
			if err != nil {
				t.Fatal(err)
			}
			if n := h.SchemaCache().Len(); n != probed {
				t.Errorf("a Run of the probed server changed the cache from %d to %d schemas", probed, n)
			}
			for _, name := range toolNames(r) {
				if !strings.HasPrefix(name, "mcp__notes__") {
					t.Errorf("worker sees %s; it mounts only notes and may not manage", name)
				}
			}
			r.Close()

			// The host chooses which framework tools its Runs get.
			chosen, err := agt.New(h.Repository(), &agt.Options{Connector: inMemoryEra(e).Connector, FrameworkTools: []string{framework.ToolResourceRead}})
			if err != nil {
				t.Fatal(err)
			}
			r, err = chosen.NewRun(ctx, "manager", &run.Options{Permission: policy.AutoAllow()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"resource_read"}, toolNames(r)); diff != "" {
				t.Errorf("manager's tools with FrameworkTools [resource_read] (-want +got):\n%s", diff)
			}
			r.Close()

			if _, err := h.NewRun(ctx, "worker", nil); err == nil || !strings.Contains(err.Error(), "set Options.Permission") {
				t.Errorf("NewRun without a Permission: err = %v, want the error that names Options.Permission", err)
			}
			if _, err := h.NewRun(ctx, "nobody", &run.Options{Permission: policy.AutoAllow()}); !errors.Is(err, resource.ErrNotFound) {
				t.Errorf("NewRun of an unknown agent: err = %v, want resource.ErrNotFound", err)
			}
		})
	}
}

// SPEC R7.4: a checkpointed Run resumes through the Host with the options
// NewRun gave it (framework tools included); a change to its mounts since
// makes the resume fail with the fingerprint mismatch, and leaves no Run.
func TestResume(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h := hostWithNotes(t, e)
			write(t, h, resource.KindAgent, "manager", `{"manager": true, "mcps": ["notes"]}`)
			opts := &run.Options{Permission: policy.AutoAllow()}

			r, err := h.NewRun(ctx, "manager", opts)
			if err != nil {
				t.Fatal(err)
			}
			cp := r.Checkpoint()
			r.Close()

			resumed, err := h.Resume(ctx, cp, opts)
			if err != nil {
				t.Fatalf("Resume with nothing changed: %v", err)
			}
			if resumed.Fingerprint() != cp.Fingerprint {
				t.Errorf("resumed fingerprint %s, checkpoint %s", resumed.Fingerprint(), cp.Fingerprint)
			}
			resumed.Close()

			if _, err := h.Resources().Write(ctx, resource.Direct(), resource.WriteRequest{
				Kind: resource.KindAgent, Ref: "manager", Add: map[string][]string{"mcps": {"other"}},
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Resume(ctx, cp, opts); !errors.Is(err, run.ErrFingerprintMismatch) {
				t.Errorf("Resume after a mount was added: err = %v, want run.ErrFingerprintMismatch", err)
			}
		})
	}
}

// postgresURL turns the test server's connection string (a URL, or
// keyword=value pairs as .ci/run sets it) into a postgres:// URL, the form
// Open recognises.
func postgresURL(t *testing.T) string {
	t.Helper()
	conn := need.Postgres(t)
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		return conn
	}
	q := url.Values{}
	db := ""
	for _, kv := range strings.Fields(conn) {
		k, v, _ := strings.Cut(kv, "=")
		if k == "dbname" {
			db = v
			continue
		}
		q.Set(k, v)
	}
	return "postgres:///" + db + "?" + q.Encode()
}

// SPEC R7.5 across hosts: two Hosts on one PostgreSQL. A write through host
// B is seen by a new Run of host A, and does not change a Run that A
// already runs.
func TestTwoHostsOnPostgres(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := postgresURL(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	// Other Options than pgrepo's defaults: open the repository, then New.
	pgOpts := &pgrepo.Options{Schema: "agt_facade_" + hex.EncodeToString(b[:])}
	open := func() *agt.Host {
		repo, err := pgrepo.Open(ctx, store, pgOpts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(repo.Close)
		h, err := agt.New(repo, inMemory)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	t.Cleanup(func() { dropSchema(t, pgOpts.Schema) }) // after the repositories close
	hostA, hostB := open(), open()
	defer hostA.Close()
	defer hostB.Close()

	write(t, hostA, resource.KindMCP, "notes", `{"mcpServers": {"notes": {"command": "fakemcp", "cwd": "/"}}}`)
	write(t, hostA, resource.KindAgent, "worker", `{}`)
	running, err := hostA.NewRun(ctx, "worker", &run.Options{Permission: policy.AutoAllow()})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()

	// Host B mounts notes on worker.
	if _, err := hostB.Resources().Write(ctx, resource.Direct(), resource.WriteRequest{
		Kind: resource.KindAgent, Ref: "worker", Add: map[string][]string{"mcps": {"notes"}},
	}); err != nil {
		t.Fatal(err)
	}

	fresh, err := hostA.NewRun(ctx, "worker", &run.Options{Permission: policy.AutoAllow()})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if len(fresh.Tools()) == 0 {
		t.Error("a new Run of host A does not see the mount written through host B")
	}
	// The running Run keeps its snapshot, even across a batch.
	if _, err := running.Execute(ctx, run.Batch{ID: "b", Agent: "worker", Calls: []run.Call{{ID: "c", Name: "mcp__notes__echo", Arguments: []byte(`{"text":"x"}`)}}}); !errors.As(err, new(*run.BatchError)) {
		t.Errorf("the running Run called a tool mounted by another host: err = %v", err)
	}
	if n := len(running.Tools()); n != 0 {
		t.Errorf("the running Run has %d tools; another host's write must not refresh it", n)
	}
}

// dropSchema removes the test's schema from the shared test server.
func dropSchema(t *testing.T, schema string) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, os.Getenv("AGT_TEST_POSTGRES"))
	if err != nil {
		t.Errorf("drop test schema: %v", err)
		return
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop test schema: %v", err)
	}
}

// Close is safe to call twice and from several goroutines (the Host is safe
// for concurrent use); the store is released once.
func TestCloseMoreThanOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, err := agt.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for range 4 {
		go func() { done <- h.Close() }()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close after Close: %v", err)
	}
	// Released: the file opens again, exclusively.
	h2, err := agt.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	h2.Close()
}

// DefaultStore follows the agt CLI's order, so that a host and an operator
// find the same store.
func TestDefaultStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"AGT_STORE first", map[string]string{"AGT_STORE": "postgres://h/db", "AGT_DB": "/a.db", "HOME": "/home/u"}, "postgres://h/db", false},
		{"then AGT_DB", map[string]string{"AGT_DB": "/a.db", "HOME": "/home/u"}, "/a.db", false},
		{"then XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/agt/agt.db", false},
		{"a relative XDG_DATA_HOME is ignored", map[string]string{"XDG_DATA_HOME": "xdg", "HOME": "/home/u"}, "/home/u/.local/share/agt/agt.db", false},
		{"empty values are unset", map[string]string{"AGT_STORE": "", "HOME": "/home/u"}, "/home/u/.local/share/agt/agt.db", false},
		{"nothing to go on", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		got, err := agt.DefaultStoreFrom(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
		if got != filepath.FromSlash(tt.want) || (err != nil) != tt.wantErr {
			t.Errorf("%s: DefaultStore = %q, %v; want %q, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
