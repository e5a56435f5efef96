package mcptest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FaultsEnv is the environment variable Main reads fault modes from, as a
// comma-separated list, in addition to the -fault flag.
const FaultsEnv = "AGT_FAKEMCP_FAULTS"

// Main runs the fake server as a program: by default on stdio, or on
// streamable HTTP (or SSE) with -http. It returns the exit status. It is the
// whole of the fakemcp command:
//
//	-fault LIST          comma-separated fault modes (also $AGT_FAKEMCP_FAULTS)
//	-http ADDR           serve streamable HTTP on ADDR (e.g. 127.0.0.1:0) at /mcp;
//	                     the first stdout line is "listening on URL"
//	-sse                 with -http, serve the old HTTP+SSE transport instead
//	-json-response       with -http, answer streamable POSTs with
//	                     application/json instead of an event stream
//	-require-header H    with -http, refuse requests without header "Name: value"
//	-call-log FILE       append the name of every tools/call request to FILE
//	-page-size N         tools per tools/list page (default 1000)
//	-tag S               ignored; lets a test find its processes in /proc
//	-era E               protocol revisions served (Era): legacy,
//	                     legacy-silent, modern (2026-07-28 only; stateless
//	                     over HTTP), dual (the default; stateless over
//	                     HTTP) or future
//	-era-file FILE       read -era from FILE at start (relative to the cwd)
//	-slow-start ORDER    on stdio, at the first start in the cwd, read nothing
//	                     until the client's initialize came (a server slower
//	                     to start than any era probe), then answer
//	                     discover-first or initialize-first
//	-ttl-ms N            ttlMs of every tools/list result (ServerOptions.TTLMs)
//	-cache-scope S       cacheScope of those results: public (default) or
//	                     private (ServerOptions.CacheScope)
//
// Stdio mode ends when stdin closes. HTTP mode ends on SIGTERM, SIGINT or
// when stdin closes.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakemcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	faultList := fs.String("fault", "", "comma-separated fault modes")
	httpAddr := fs.String("http", "", "serve streamable HTTP on this address")
	sse := fs.Bool("sse", false, "with -http, serve HTTP+SSE instead of streamable HTTP")
	jsonResponse := fs.Bool("json-response", false, "with -http, answer streamable POSTs with application/json")
	requireHeader := fs.String("require-header", "", `with -http, a required header "Name: value"`)
	callLog := fs.String("call-log", "", "append each tools/call tool name to this file")
	pageSize := fs.Int("page-size", 0, "tools per tools/list page")
	sleeper := fs.Bool("sleeper", false, "internal: sleep until killed (the spawn-child grandchild)")
	tag := fs.String("tag", "", "ignored; lets a test find its processes in /proc")
	eraName := fs.String("era", string(defaultEra), "protocol revisions served: legacy, legacy-silent, modern, dual or future")
	eraFile := fs.String("era-file", "", "read the era from this file at start (a server upgraded between starts)")
	slowOrder := fs.String("slow-start", "", "on stdio, at the first start, hold until initialize came, then answer discover-first or initialize-first")
	ttlMS := fs.Int("ttl-ms", 0, "ttlMs of every tools/list result")
	cacheScope := fs.String("cache-scope", "", "cacheScope of every tools/list result: public or private")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *sleeper {
		select {} // killed by the host's process-group cleanup
	}
	faults, err := parseFaults(*faultList + "," + os.Getenv(FaultsEnv))
	if err != nil {
		fmt.Fprintln(stderr, "fakemcp:", err)
		return 2
	}
	if *eraFile != "" {
		b, err := os.ReadFile(*eraFile)
		if err != nil {
			fmt.Fprintln(stderr, "fakemcp: era file:", err)
			return 2
		}
		*eraName = strings.TrimSpace(string(b))
	}
	era, err := parseEra(*eraName)
	if err != nil {
		fmt.Fprintln(stderr, "fakemcp:", err)
		return 2
	}
	if *ttlMS < 0 || (*cacheScope != "" && *cacheScope != "public" && *cacheScope != "private") {
		fmt.Fprintln(stderr, "fakemcp: -ttl-ms wants a number of milliseconds >= 0, -cache-scope public or private")
		return 2
	}
	opts := &ServerOptions{Faults: faults, PageSize: *pageSize, Era: era, TTLMs: *ttlMS, CacheScope: *cacheScope, requestIDs: &requestIDs{}}
	has := opts.has

	if has(FaultExitAtStart) {
		fmt.Fprintln(stderr, "fakemcp: exiting at start (fault exit-at-start)")
		return 3
	}
	if has(FaultEchoSecret) {
		if *httpAddr != "" {
			return serveHandler(func() http.Handler { return echoSecretHandler(era) }, *httpAddr, *requireHeader, nil, stdin, stdout, stderr)
		}
		return serveEchoSecret(has(FaultBanner), era, stdin, stdout, stderr)
	}
	if f, ok := hostileFault(faults); ok {
		if f == FaultHostileContent && *httpAddr != "" {
			return serveHandler(func() http.Handler { return serveHostileHTTP(*jsonResponse, era) }, *httpAddr, *requireHeader, nil, stdin, stdout, stderr)
		}
		return serveHostile(f, *pageSize, era, stdin, stdout)
	}
	var dropper *sessionDropper
	if has(FaultDropSession) {
		if *httpAddr == "" || *sse {
			fmt.Fprintln(stderr, "fakemcp: fault drop-session needs -http without -sse (streamable HTTP)")
			return 2
		}
		dropper = &sessionDropper{}
		opts.dropSession = dropper.drop
	}
	if has(FaultBreakStream) && *httpAddr != "" && !*sse {
		activeBreaker = &streamBreaker{running: map[string]*breakingWriter{}}
	}
	if has(FaultIgnoreSIGTERM) {
		signal.Ignore(syscall.SIGTERM)
	}
	if has(FaultSpawnChild) {
		if err := spawnSleeper(stderr, *tag); err != nil {
			fmt.Fprintln(stderr, "fakemcp: spawn-child:", err)
			return 1
		}
	}
	if has(FaultNoHandshake) {
		fmt.Fprintln(stderr, "fakemcp: reading stdin and never answering (fault no-handshake)")
		_, _ = io.Copy(io.Discard, stdin)
		select {} // until a signal ends the process
	}
	// Over HTTP, a crash drops every connection and session, as a server
	// that restarted: the process serves on (serveHTTP sets restart).
	var restart atomic.Pointer[func()]
	if has(FaultCrashOnCall) || has(FaultContractDrift) {
		opts.Crash = func() {
			fmt.Fprintln(stderr, "fakemcp: crashing during a call (fault crash-on-call or contract-drift)")
			if f := restart.Load(); f != nil {
				(*f)()
				return
			}
			os.Exit(70)
		}
	}
	if *callLog != "" {
		f, err := os.OpenFile(*callLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "fakemcp: call log:", err)
			return 1
		}
		defer f.Close()
		var mu sync.Mutex
		opts.OnCall = func(name string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(f, name)
		}
	}
	server := NewServer(opts)

	status := 0
	if *httpAddr != "" {
		status = serveHTTP(server, era, *httpAddr, *sse, *jsonResponse, *requireHeader, dropper, &restart, has(FaultTasks), stdin, stdout, stderr)
	} else {
		if has(FaultBanner) {
			fmt.Fprintln(stdout, Banner)
		}
		in, out := stdin, stdout
		if *slowOrder != "" {
			var err error
			if in, out, err = slowStart(*slowOrder, stdin, stdout); err != nil {
				fmt.Fprintln(stderr, "fakemcp: slow-start:", err)
				return 2
			}
		}
		fmt.Fprintln(stderr, "fakemcp: serving on stdio")
		var t mcp.Transport = &mcp.IOTransport{Reader: io.NopCloser(&idSniffer{r: in, ids: opts.requestIDs}), Writer: nopWriteCloser{out}}
		if has(FaultTasks) {
			t = taskTransport{t}
		}
		if err := server.Run(context.Background(), t); err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintln(stderr, "fakemcp: stdio:", err)
		}
	}
	if has(FaultIgnoreSIGTERM) {
		fmt.Fprintln(stderr, "fakemcp: stdin closed; staying alive until SIGKILL (fault ignore-sigterm)")
		select {}
	}
	return status
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func parseFaults(list string) ([]Fault, error) {
	var out []Fault
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		f := Fault(name)
		known := false
		for _, k := range AllFaults {
			known = known || k == f
		}
		if !known {
			return nil, fmt.Errorf("unknown fault mode %q", name)
		}
		out = append(out, f)
	}
	return out, nil
}

// spawnSleeper starts a copy of this program that sleeps until killed, in
// this process's group, holding stderr: an orphan unless the host ends the
// whole group.
func spawnSleeper(stderr io.Writer, tag string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-sleeper", "-tag", tag)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "fakemcp: spawned grandchild pid %d (fault spawn-child)\n", cmd.Process.Pid)
	return cmd.Process.Release()
}

// serveHTTP serves server over HTTP in era; dropper, when not nil,
// stands before the streamable handler (FaultDropSession).
func serveHTTP(server *mcp.Server, era Era, addr string, sse, jsonResponse bool, requireHeader string, dropper *sessionDropper, restart *atomic.Pointer[func()], tasks bool, stdin io.Reader, stdout, stderr io.Writer) int {
	return serveHandler(func() http.Handler {
		if sse {
			h := http.Handler(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
			if tasks {
				h = taskHTTP(h)
			}
			return h
		}
		h := streamableHandler(server, era, jsonResponse)
		if dropper != nil {
			h = dropper.handler(h)
		}
		if activeBreaker != nil {
			h = activeBreaker.handler(h)
		}
		if tasks {
			h = taskHTTP(h)
		}
		return h
	}, addr, requireHeader, restart, stdin, stdout, stderr)
}

// streamableHandler serves server over streamable HTTP as a server of
// era does: stateless in a modern era, refusing modern requests as a
// legacy server does.
func streamableHandler(server *mcp.Server, era Era, jsonResponse bool) http.Handler {
	h := http.Handler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse, Stateless: era.stateless()}))
	if era.legacy() {
		h = legacyHTTP(h)
	}
	return h
}

// serveHandler serves the handler newHandler makes on addr at /mcp until
// SIGTERM, SIGINT or the end of stdin; the first stdout line is
// "listening on URL". When restart is not nil, it is set to a function
// that starts a new handler and ends every connection to the old one.
func serveHandler(newHandler func() http.Handler, addr, requireHeader string, restart *atomic.Pointer[func()], stdin io.Reader, stdout, stderr io.Writer) int {
	name, value, ok := strings.Cut(requireHeader, ":")
	if requireHeader != "" && (!ok || strings.TrimSpace(name) == "") {
		fmt.Fprintln(stderr, `fakemcp: -require-header wants "Name: value"`)
		return 2
	}
	makeHandler := func() http.Handler {
		handler := newHandler()
		if requireHeader != "" {
			handler = RequireHeader(handler, strings.TrimSpace(name), strings.TrimSpace(value))
		}
		return handler
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "fakemcp: listen:", err)
		return 1
	}
	// The handler holds the sessions: a restart is a new handler, and
	// the end of every connection to the old one.
	var (
		current atomic.Pointer[http.Handler]
		connsMu sync.Mutex
		conns   = map[net.Conn]struct{}{}
	)
	h := makeHandler()
	current.Store(&h)
	if restart != nil {
		restartFn := func() {
			nh := makeHandler()
			current.Store(&nh)
			connsMu.Lock()
			defer connsMu.Unlock()
			for c := range conns {
				_ = c.Close()
			}
		}
		restart.Store(&restartFn)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) })
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	mux.Handle("/mcp/", handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(c net.Conn, st http.ConnState) {
			connsMu.Lock()
			defer connsMu.Unlock()
			switch st {
			case http.StateNew:
				conns[c] = struct{}{}
			case http.StateClosed, http.StateHijacked:
				delete(conns, c)
			}
		}}
	fmt.Fprintf(stdout, "listening on http://%s/mcp\n", ln.Addr())

	done := make(chan struct{})
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		stdinClosed := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, stdin); close(stdinClosed) }()
		select {
		case <-sig:
		case <-stdinClosed:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		close(done)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "fakemcp: serve:", err)
		return 1
	}
	<-done
	return 0
}

// RequireHeader wraps h so that a request without the header name set to
// value gets 401 Unauthorized; the fake server's -require-header flag uses
// it to prove a host sends a document's headers.
func RequireHeader(h http.Handler, name, value string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(name) != value {
			http.Error(w, "missing or wrong "+name+" header", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
