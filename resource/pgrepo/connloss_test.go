package pgrepo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/pgrepo"
)

// cutProxy forwards TCP connections to the test server. Once armed with a
// marker, the first client message holding it is forwarded, the server's
// answer is thrown away and both sides are closed: the server did the work,
// the client never hears of it. That is the connection loss in which a
// careless store either loses a write or applies it twice.
type cutProxy struct {
	ln       net.Listener
	upstream func() (net.Conn, error)

	mu     sync.Mutex
	marker []byte
	cuts   int
	conns  []net.Conn
	wg     sync.WaitGroup
	closed bool
}

func startCutProxy(t *testing.T, connString string) (*cutProxy, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, upstream: func() (net.Conn, error) { return net.Dial(network, addr) }}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	port := ln.Addr().(*net.TCPAddr).Port
	via := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", port, cfg.User, cfg.Database)
	if cfg.Password != "" {
		via += " password=" + cfg.Password
	}
	return p, via
}

// arm makes the next client message that contains marker the last one.
func (p *cutProxy) arm(marker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.marker = []byte(marker)
}

func (p *cutProxy) cutCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := p.upstream()
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			client.Close()
			server.Close()
			return
		}
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		cut := make(chan struct{})
		p.wg.Add(2)
		go p.clientToServer(client, server, cut)
		go p.serverToClient(server, client, cut)
	}
}

func (p *cutProxy) clientToServer(client, server net.Conn, cut chan struct{}) {
	defer p.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			p.mu.Lock()
			hit := len(p.marker) > 0 && bytes.Contains(bytes.ToLower(chunk), bytes.ToLower(p.marker))
			if hit {
				p.marker = nil
				p.cuts++
			}
			p.mu.Unlock()
			if hit {
				// Before forwarding: the answer must find the cut made.
				close(cut)
			}
			if _, werr := server.Write(chunk); werr != nil || hit {
				return
			}
		}
		if err != nil {
			server.Close()
			return
		}
	}
}

func (p *cutProxy) serverToClient(server, client net.Conn, cut chan struct{}) {
	defer p.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		select {
		case <-cut:
			// The server answered the marked message, so it has done the
			// work; the client never sees the answer.
			client.Close()
			server.Close()
			return
		default:
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			client.Close()
			return
		}
	}
}

func (p *cutProxy) close() {
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// A write whose answer is lost is reported as ErrUnknownOutcome and is
// applied exactly once; a transaction cut before COMMIT writes nothing and
// says so. Never a lost or doubled write (issue 8).
func TestConnectionLoss(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name        string
		marker      string
		write       func(repo *pgrepo.Repo) error
		wantUnknown bool
		key         resource.Key
		wantRev     int64 // stored afterwards, 0 for none
	}{
		{
			name: "Update answer lost", marker: "cut-here", key: keyA,
			write: func(repo *pgrepo.Repo) error {
				_, err := repo.Update(ctx, keyA, json.RawMessage(`{"v":"cut-here"}`), 1)
				return err
			},
			wantUnknown: true, wantRev: 2,
		},
		{
			name: "Create answer lost", marker: "cut-here", key: keyB,
			write: func(repo *pgrepo.Repo) error {
				_, err := repo.Create(ctx, keyB, json.RawMessage(`{"v":"cut-here"}`))
				return err
			},
			wantUnknown: true, wantRev: 1,
		},
		{
			name: "Modify cut before COMMIT", marker: "cut-here", key: keyA,
			write: func(repo *pgrepo.Repo) error {
				_, err := repo.Modify(ctx, keyA, 1, func(resource.Resource) (json.RawMessage, error) {
					return json.RawMessage(`{"v":"cut-here"}`), nil
				})
				return err
			},
			wantUnknown: false, wantRev: 1,
		},
		{
			name: "Modify COMMIT answer lost", marker: "commit", key: keyA,
			write: func(repo *pgrepo.Repo) error {
				_, err := repo.Modify(ctx, keyA, 1, func(resource.Resource) (json.RawMessage, error) {
					return json.RawMessage(`{"v":2}`), nil
				})
				return err
			},
			wantUnknown: true, wantRev: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn, schema := testConnString(t), newSchema(t)
			direct := openRepoAt(t, conn, schema)
			if _, err := direct.Create(ctx, keyA, json.RawMessage(`{"v":1}`)); err != nil {
				t.Fatal(err)
			}
			proxy, via := startCutProxy(t, conn)
			repo := openRepoAt(t, via, schema)
			proxy.arm(tt.marker)

			err := tt.write(repo)
			if err == nil {
				t.Fatalf("the write succeeded though its connection was cut (cuts: %d)", proxy.cutCount())
			}
			if got := errors.Is(err, pgrepo.ErrUnknownOutcome); got != tt.wantUnknown {
				t.Errorf("errors.Is(err, ErrUnknownOutcome) = %v, want %v; err: %v", got, tt.wantUnknown, err)
			}
			if strings.Contains(err.Error(), "cut-here") {
				t.Errorf("the error echoes the data: %v", err)
			}
			got, getErr := direct.Get(ctx, tt.key)
			if getErr != nil {
				t.Fatal(getErr)
			}
			if got.Revision != tt.wantRev {
				t.Errorf("stored revision %d, want %d (a write lost or applied twice)", got.Revision, tt.wantRev)
			}
			// The pool recovers: the next write goes through.
			if _, err := repo.Update(ctx, tt.key, json.RawMessage(`{"after":true}`), tt.wantRev); err != nil {
				t.Errorf("write after the cut: %v", err)
			}
		})
	}
}

// Connections the server closes while they sit idle in the pool (a restart,
// pg_terminate_backend) cost a read nothing, and a write is at worst
// reported as failed: it is never applied twice.
func TestIdleConnectionsTerminated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, schema := testConnString(t), newSchema(t)
	app := "agt_pgrepo_" + schema
	repo := openRepoAt(t, conn+" application_name="+app+" pool_max_conns=4", schema)
	if _, err := repo.Create(ctx, keyA, json.RawMessage(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Get(ctx, keyA); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		t.Helper()
		terminateBackends(t, app)
	}

	kill()
	if _, err := repo.Get(ctx, keyA); err != nil {
		t.Errorf("Get after the server closed the pooled connections: %v", err)
	}
	if _, err := repo.List(ctx, keyA.Kind, ""); err != nil {
		t.Errorf("List after the server closed the pooled connections: %v", err)
	}

	// Fill the pool with live connections, all killed at once, as a server
	// restart would: a read still gets through.
	const poolSize = 4
	for i := 0; i < poolSize; i++ {
		key := resource.Key{Kind: keyA.Kind, Ref: resource.Ref(fmt.Sprintf("warm%d", i))}
		if _, err := repo.Create(ctx, key, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	fill := func() {
		t.Helper()
		inside := make(chan struct{}, poolSize)
		release := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < poolSize; i++ {
			key := resource.Key{Kind: keyA.Kind, Ref: resource.Ref(fmt.Sprintf("warm%d", i))}
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each Modify holds its own connection while fn waits.
				_, err := repo.Modify(ctx, key, 0, func(resource.Resource) (json.RawMessage, error) {
					inside <- struct{}{}
					<-release
					return nil, nil
				})
				if err != nil {
					t.Errorf("Modify: %v", err)
				}
			}()
		}
		for i := 0; i < poolSize; i++ {
			<-inside
		}
		close(release)
		wg.Wait()
	}
	fill()
	kill()
	if _, err := repo.Get(ctx, keyA); err != nil {
		t.Errorf("Get after the server closed every pooled connection: %v", err)
	}
	fill()
	kill()
	// Modify's transaction breaks before COMMIT, so it is safe to run again.
	res, err := repo.Modify(ctx, keyA, resource.AnyRevision, func(cur resource.Resource) (json.RawMessage, error) {
		return json.RawMessage(`{"v":"modified"}`), nil
	})
	if err != nil || res.Revision != 2 {
		t.Errorf("Modify after the server closed every pooled connection: revision %d, %v; want 2", res.Revision, err)
	}

	kill()
	before, err := repo.Get(ctx, keyA)
	if err != nil {
		t.Fatal(err)
	}
	kill()
	_, err = repo.Update(ctx, keyA, json.RawMessage(`{"v":2}`), before.Revision)
	after, getErr := repo.Get(ctx, keyA)
	if getErr != nil {
		t.Fatal(getErr)
	}
	switch {
	case err == nil && after.Revision != before.Revision+1:
		t.Errorf("Update succeeded but the revision went %d -> %d", before.Revision, after.Revision)
	case errors.Is(err, pgrepo.ErrUnknownOutcome) && after.Revision > before.Revision+1:
		t.Errorf("Update applied twice: revision %d -> %d", before.Revision, after.Revision)
	case err != nil && !errors.Is(err, pgrepo.ErrUnknownOutcome) && after.Revision != before.Revision:
		t.Errorf("Update failed (%v) but the revision went %d -> %d", err, before.Revision, after.Revision)
	}
	t.Logf("Update on a terminated connection: %v", err)
}

// terminateBackends closes the server side of every connection named app and
// waits until they are gone, so the test continues from a settled state.
func terminateBackends(t *testing.T, app string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, testConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// pg_terminate_backend with a timeout waits for the process to exit.
	rows, err := c.Query(ctx, "SELECT pg_terminate_backend(pid, 30000) FROM pg_stat_activity WHERE application_name = $1", app)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var gone bool
		if err := rows.Scan(&gone); err != nil {
			t.Fatal(err)
		}
		if !gone {
			t.Fatal("a backend outlived pg_terminate_backend's 30 s wait")
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
