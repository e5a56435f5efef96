package mcptest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FaultBreakStream (tool; over streamable HTTP with -http, not -sse):
// add the tools ToolBreakRead (annotations readOnlyHint), ToolBreakIdempotent
// (idempotentHint) and ToolBreakWrite (no hint: it may have side
// effects). The first call of each breaks its response stream in the
// middle (issue 25 item 6): the server sends one progress notification
// on it (when the call carries a progress token), then drops the
// connection without the answer, as a network or a proxy may, while
// the tool is running; every later call answers "NAME answered (call
// N)". Each call counts, so -call-log shows whether a client sent it
// again. Elsewhere (stdio, in process) the tools answer with an error.
const FaultBreakStream Fault = "break-stream"

// The tools of FaultBreakStream.
const (
	ToolBreakRead       = "break_read"
	ToolBreakIdempotent = "break_idempotent"
	ToolBreakWrite      = "break_write"
)

// streamBreaker stands before the streamable HTTP handler with
// FaultBreakStream: it ends the connection of a tools/call whose tool
// asked for it, by the call's progress token.
type streamBreaker struct {
	mu      sync.Mutex
	running map[string]*breakingWriter // by progress token
}

// breakingWriter is the response of a call the breaker may break: once
// broken, nothing more reaches the client (the answer the server still
// writes is dropped), and the handler ends the connection.
type breakingWriter struct {
	http.ResponseWriter
	cancel context.CancelFunc
	broken atomic.Bool
}

func (w *breakingWriter) Write(p []byte) (int, error) {
	if w.broken.Load() {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *breakingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.broken.Load() {
		f.Flush()
	}
}

func (w *breakingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// activeBreaker is the breaker of the fake server Main serves over
// streamable HTTP with FaultBreakStream, nil otherwise (one per
// process).
var activeBreaker *streamBreaker

// maxPeekedCall bounds the body the breaker reads to find a call's
// progress token; a larger request passes untouched.
const maxPeekedCall = 1 << 20

func (b *streamBreaker) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := ""
		if r.Method == http.MethodPost && r.ContentLength >= 0 && r.ContentLength <= maxPeekedCall {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxPeekedCall))
			if err != nil {
				http.Error(w, "reading the request failed", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			_, token, _ = callToken(body)
		}
		if token == "" {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		bw := &breakingWriter{ResponseWriter: w, cancel: cancel}
		b.mu.Lock()
		b.running[token] = bw
		b.mu.Unlock()
		next.ServeHTTP(bw, r.WithContext(ctx))
		b.mu.Lock()
		delete(b.running, token)
		b.mu.Unlock()
		if bw.broken.Load() {
			// The connection ends without the rest of the response: the
			// client reads what was flushed, then an unexpected EOF.
			panic(http.ErrAbortHandler)
		}
	})
}

// breakCall ends the stream of the call with the progress token;
// false when no such call is running here.
func (b *streamBreaker) breakCall(token string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.running[token]
	if ok {
		w.broken.Store(true)
		w.cancel()
	}
	return ok
}

// addBreakStreamTools adds the tools of FaultBreakStream; b nil: not
// served over streamable HTTP by Main.
func addBreakStreamTools(s *mcp.Server, b *streamBreaker) {
	var mu sync.Mutex
	calls := map[string]int{}
	for _, t := range []struct {
		name  string
		hints *mcp.ToolAnnotations
	}{
		{ToolBreakRead, &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{ToolBreakIdempotent, &mcp.ToolAnnotations{IdempotentHint: true}},
		{ToolBreakWrite, nil},
	} {
		mcp.AddTool(s, &mcp.Tool{Name: t.name, Annotations: t.hints, InputSchema: schemaFor[struct{}](nil),
			Description: "Its first call breaks its response stream in the middle; later calls answer (fault mode)."},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				mu.Lock()
				calls[t.name]++
				n := calls[t.name]
				mu.Unlock()
				if n > 1 {
					return textResult("%s answered (call %d)", t.name, n), nil, nil
				}
				token, _ := req.Params.GetProgressToken().(string)
				if b == nil || token == "" {
					return nil, nil, errors.New("breaking the stream works only over streamable HTTP (fakemcp -http -fault break-stream), for a call with a string progress token")
				}
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Message: "about to break"})
				if !b.breakCall(token) {
					return nil, nil, errors.New("the call's stream is not known to the breaker")
				}
				// This answer never reaches the client: the stream is
				// broken.
				return nil, nil, errors.New("the stream was broken")
			})
	}
}
