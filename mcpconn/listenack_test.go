package mcpconn_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agtsdk/agt/internal/runtest/poll"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/mcpconn/mcptest"
	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// changeAfterListing is a fake server of era e that changes its tools
// (adds "late") right after it computed its first tools listing, and
// acknowledges subscriptions/listen only a moment after that listing
// or, when none comes, after a moment: a client that lists before the
// acknowledgement misses the change for good (the server reports it to
// no listen). The moment is the server's pace, not the test's
// synchronisation: a slow machine only makes the client's wait longer.
func changeAfterListing(e mcptest.Era) *mcp.Server {
	server := mcptest.NewServer(&mcptest.ServerOptions{Era: e})
	listed := make(chan struct{})
	var once atomic.Bool
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "subscriptions/listen":
				t := time.NewTimer(200 * time.Millisecond)
				defer t.Stop()
				select {
				case <-listed:
					// Past the go-sdk's 10 ms delay of its change
					// notifications: they go to no listen.
					t.Reset(100 * time.Millisecond)
					select {
					case <-t.C:
					case <-ctx.Done():
					}
				case <-t.C:
				case <-ctx.Done():
				}
			case "tools/list":
				res, err := next(ctx, method, req)
				if once.CompareAndSwap(false, true) {
					mcp.AddTool(server, &mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
						func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
							return &mcp.CallToolResult{}, nil, nil
						})
					close(listed)
				}
				return res, err
			}
			return next(ctx, method, req)
		}
	})
	return server
}

// Issue 25 item 5: a modern server tells only a listen it has
// acknowledged, so the first listing of a session that wants tool
// changes waits for the acknowledgement: a change the server makes
// right after Connect (here: right after the first listing) is in the
// first listing, or reported to ToolsChanged; it is never lost (before
// the fix the first listing went before the acknowledgement and the
// change was neither). Stdio (the
// fake server over a pipe) and streamable HTTP, modern and dual era.
func TestListenFirstListingWaitsForAck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport string
		era       mcptest.Era
	}{
		{resource.TransportStdio, mcptest.EraModern},
		{resource.TransportStdio, mcptest.EraDual},
		{resource.TransportHTTP, mcptest.EraModern},
		{resource.TransportHTTP, mcptest.EraDual},
	} {
		t.Run(tc.transport+"/"+string(tc.era), func(t *testing.T) {
			t.Parallel()
			server := changeAfterListing(tc.era)
			// The first listing's wait for the acknowledgement is bounded
			// by EraProbeTimeout: long here, so that a slow machine never
			// ends it before the server acknowledges.
			opts := mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{EraProbeTimeout: time.Minute}}
			var srv resource.MCPServer
			if tc.transport == resource.TransportStdio {
				opts.Dial, srv = pipeDial(t, server)
			} else {
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
					&mcp.StreamableHTTPOptions{Stateless: true}) // as mcptest serves both eras
				ts := httptest.NewServer(h)
				t.Cleanup(ts.Close)
				srv = resource.MCPServer{Type: resource.TransportHTTP, URL: ts.URL, StartupTimeoutMS: 20000}
			}
			c := quickConnector(&opts)
			defer c.Close()
			var told atomic.Int32
			s := connectWith(t, c, srv, &mcpconn.Handlers{ToolsChanged: func(context.Context, mcpconn.Incoming) { told.Add(1) }})
			if s.ProtocolVersion() != mcpconn.ModernProtocolVersion {
				t.Fatalf("ProtocolVersion = %q", s.ProtocolVersion())
			}
			tools, err := s.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(tools, func(tl mcpconn.Tool) bool { return tl.Name == "late" }) {
				// Not listed: then it must be reported.
				poll.Until(t, "the change to be reported", func() bool { return told.Load() > 0 && s.ToolsChanged() > 0 })
			}
		})
	}
}

// pipeDial serves server to the Connector over a pipe, as a stdio
// server's lines (the Dial option).
func pipeDial(t *testing.T, server *mcp.Server) (func(context.Context, resource.Ref, resource.MCPServer) (mcp.Transport, error), resource.MCPServer) {
	return func(ctx context.Context, _ resource.Ref, _ resource.MCPServer) (mcp.Transport, error) {
		serverConn, clientConn := net.Pipe()
		ss, err := server.Connect(context.WithoutCancel(ctx), &mcp.IOTransport{Reader: serverConn, Writer: serverConn}, nil)
		if err != nil {
			_ = clientConn.Close()
			return nil, err
		}
		t.Cleanup(func() { _ = ss.Close() })
		return &mcp.IOTransport{Reader: clientConn, Writer: clientConn}, nil
	}, resource.MCPServer{Type: resource.TransportStdio, Command: "unused"}
}

// Issue 25 item 5: a modern server on stdio that answers
// subscriptions/listen with an error will not acknowledge it: the first
// Tools lists at once (the bound is an hour here: the test would time
// out), and the session keeps working without change notifications.
func TestListenRefusedOnStdio(t *testing.T) {
	t.Parallel()
	server := mcptest.NewServer(&mcptest.ServerOptions{Era: mcptest.EraModern})
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "subscriptions/listen" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no listen here"}
			}
			return next(ctx, method, req)
		}
	})
	dial, srv := pipeDial(t, server)
	c := quickConnector(&mcpconn.ConnectorOptions{Dial: dial, Limits: &mcpconn.Limits{EraProbeTimeout: time.Hour}})
	defer c.Close()
	s := connectWith(t, c, srv, &mcpconn.Handlers{ToolsChanged: func(context.Context, mcpconn.Incoming) {}})
	if s.ProtocolVersion() != mcpconn.ModernProtocolVersion {
		t.Fatalf("ProtocolVersion = %q", s.ProtocolVersion())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if tools, err := s.Tools(ctx); err != nil || !slices.ContainsFunc(tools, func(tl mcpconn.Tool) bool { return tl.Name == mcptest.ToolEcho }) {
		t.Errorf("Tools: %v; want a listing with %s", err, mcptest.ToolEcho)
	}
}
