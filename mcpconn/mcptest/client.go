//lint:file-ignore SA1019 sampling, roots and logging are deprecated from protocol 2026-07-28 as server requests; the fake still sends them to legacy clients, and asks modern ones inside input_required results

package mcptest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names of the tools FaultClientFeatures adds.
const (
	ToolAsk        = "ask"         // elicitation/create, form or url
	ToolAskMany    = "ask_many"    // many elicitations at once
	ToolSample     = "sample"      // sampling/createMessage
	ToolListRoots  = "list_roots"  // roots/list
	ToolProgress   = "progress"    // notifications/progress, then a result
	ToolLog        = "log"         // notifications/message
	ToolAddTool    = "add_tool"    // adds a tool: notifications/tools/list_changed
	ToolClientCaps = "client_caps" // the client's capabilities from initialize
	ToolLate       = "late"        // an elicitation and a log line after the call, outside it
	ToolURLNeeded  = "url_needed"  // answers with URL elicitation required (-32042)
)

// How a request or log line of the server names the call it is about
// (AskIn.Names, LogIn.Names, LateIn.Names): MCP 2025-11-25 has no field
// for it, so the server may put one in its params' _meta.
const (
	// NamesNothing: nothing in _meta (over streamable HTTP, a message
	// sent during a call still goes on the call's own event stream).
	NamesNothing = ""
	// NamesToken: _meta.progressToken, the progress token of the call.
	NamesToken = "token"
	// NamesRequest: _meta.relatedRequestId, the JSON-RPC id of the
	// call's tools/call request (stdio only: the binary reads it off its
	// stdin; elsewhere the tool fails).
	NamesRequest = "request"
)

// AskDefaults are the defaults of the form ToolAsk requests (SEP-1034).
// They cover the types of the conformance scenario
// elicitation-sep1034-client-defaults: string, integer, number, enum,
// boolean.
var AskDefaults = map[string]any{"name": "Ann", "age": float64(30), "score": 95.5, "status": "active", "verified": true}

// AskURL is the URL of the url-mode elicitation of ToolAsk.
const AskURL = "https://auth.example.com/login?session=s1"

// AskIn is the input of ask.
type AskIn struct {
	// Mode is "form" (default) or "url".
	Mode string `json:"mode,omitempty"`
	// Names says how the elicitation names the call (NamesNothing,
	// NamesToken, NamesRequest).
	Names string `json:"names,omitempty"`
}

// URLNeededIn is the input of url_needed, which answers every call with
// the JSON-RPC error URL elicitation required (-32042, MCP 2025-11-25)
// listing Count url-mode elicitations (default 1), each with URL (default
// AskURL), the message "Connect your account" and the elicitationId
// "need-N" (N from 1). Mode, when set, replaces each one's mode "url"
// (an error a client must not take); Data, when set, is the error's data
// as it is (a malformed one).
type URLNeededIn struct {
	Count int    `json:"count,omitempty"`
	URL   string `json:"url,omitempty"`
	Mode  string `json:"mode,omitempty"`
	Data  string `json:"data,omitempty"`
}

// AskManyIn is the input of ask_many.
type AskManyIn struct {
	Count int `json:"count"`
}

// SampleIn is the input of sample.
type SampleIn struct {
	// Messages is how many user messages to send (default 1); Bytes the
	// size of each text (default 5).
	Messages int `json:"messages,omitempty"`
	Bytes    int `json:"bytes,omitempty"`
	// Times is how many requests to make, one after the other (default 1).
	Times int `json:"times,omitempty"`
}

// ProgressIn is the input of progress.
type ProgressIn struct {
	// Steps progress notifications, each after MS milliseconds.
	Steps int `json:"steps"`
	MS    int `json:"ms"`
}

// LogIn is the input of log.
type LogIn struct {
	Count int `json:"count"`
	Bytes int `json:"bytes,omitempty"`
	// Level is the lines' level (default info); the server sends only
	// lines at or above the level the client asked for
	// (logging/setLevel), none before it asked.
	Level string `json:"level,omitempty"`
	// Names says how each line names the call (NamesNothing,
	// NamesToken, NamesRequest).
	Names string `json:"names,omitempty"`
	// Structured makes each line's data the object LogData(i) instead
	// of a string.
	Structured bool `json:"structured,omitempty"`
}

// LogData is the data of line i of the log tool with structured set:
// {"event":"disk","free_mb":12,"line":i}.
func LogData(i int) map[string]any {
	return map[string]any{"event": "disk", "free_mb": 12, "line": i}
}

// LateIn is the input of late: it returns at once, and when the server
// next receives a tools/call (of any session), it sends the elicitation
// and the log line chosen here on the session that called late, outside
// any request (on streamable HTTP: on the standalone event stream), as a
// server does about work it finished after the call returned. Names says
// how they name the call to late (which has returned by then).
type LateIn struct {
	Elicit bool   `json:"elicit,omitempty"`
	Log    bool   `json:"log,omitempty"`
	Names  string `json:"names,omitempty"`
}

// AddToolIn is the input of add_tool.
type AddToolIn struct {
	Name string `json:"name"`
	// BreakListing makes every later tools/list fail.
	BreakListing bool `json:"break_listing,omitempty"`
}

// clientFeatures are the tools that use what a client offers.
type clientFeatures struct {
	server *mcp.Server
	ids    *requestIDs // nil: not known (not stdio)
	mu     sync.Mutex
	broken bool // tools/list fails (add_tool break_listing)
	// late is what late armed, sent at the next tools/call; nil: none.
	late func()
	// changed is signalled when notifications/tools/list_changed has
	// been sent (the go-sdk sends it 10 ms after AddTool).
	changed chan struct{}
	// listens follows the subscriptions/listen requests (ToolListens).
	listens *listenCount
}

// sent is the server's sending middleware: it tells add_tool that the
// notification went out.
func (cf *clientFeatures) sent(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "notifications/tools/list_changed" {
			select {
			case cf.changed <- struct{}{}:
			default:
			}
		}
		return res, err
	}
}

func (cf *clientFeatures) listingBroken() bool {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	return cf.broken
}

func (cf *clientFeatures) add(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: ToolAsk, Description: "Asks the user (elicitation) and returns the answer as JSON.",
		InputSchema: schemaFor[AskIn](func(s *jsonschema.Schema) { s.Properties["mode"].Enum = []any{"form", "url"} })}, cf.ask)
	mcp.AddTool(s, &mcp.Tool{Name: ToolAskMany, Description: "Sends count elicitations at once; returns how many were answered and refused.",
		InputSchema: schemaFor[AskManyIn](func(s *jsonschema.Schema) {
			s.Properties["count"].Minimum = jsonschema.Ptr(1.0)
			s.Properties["count"].Maximum = jsonschema.Ptr(1000.0)
		})}, cf.askMany)
	mcp.AddTool(s, &mcp.Tool{Name: ToolSample, Description: "Asks the client's model (sampling) and returns its text.",
		InputSchema: schemaFor[SampleIn](nil)}, cf.sample)
	mcp.AddTool(s, &mcp.Tool{Name: ToolListRoots, Description: "Returns the client's roots as JSON.",
		InputSchema: schemaFor[struct{}](nil)}, cf.listRoots)
	mcp.AddTool(s, &mcp.Tool{Name: ToolProgress, Description: "Reports progress steps times, ms apart, then returns.",
		InputSchema: schemaFor[ProgressIn](nil)}, cf.progress)
	mcp.AddTool(s, &mcp.Tool{Name: ToolLog, Description: "Sends count log messages at level (default info; structured: objects as their data).",
		InputSchema: schemaFor[LogIn](func(s *jsonschema.Schema) {
			s.Properties["level"].Enum = []any{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
		})}, cf.log)
	mcp.AddTool(s, &mcp.Tool{Name: ToolURLNeeded, Description: "Answers with URL elicitation required (-32042): the user must first open a URL.",
		InputSchema: schemaFor[URLNeededIn](func(s *jsonschema.Schema) {
			s.Properties["count"].Minimum = jsonschema.Ptr(1.0)
			s.Properties["count"].Maximum = jsonschema.Ptr(1000.0)
		})}, cf.urlNeeded)
	mcp.AddTool(s, &mcp.Tool{Name: ToolClientCaps, Description: "Returns the capabilities the client declared in initialize, as JSON.",
		InputSchema: schemaFor[struct{}](nil)}, cf.clientCaps)
	mcp.AddTool(s, &mcp.Tool{Name: ToolAddTool, Description: "Adds a tool named name (an echo), which tells the clients that the tools changed.",
		InputSchema: schemaFor[AddToolIn](nil)}, cf.addTool)
	names := func(s *jsonschema.Schema) { s.Properties["names"].Enum = []any{NamesNothing, NamesToken, NamesRequest} }
	mcp.AddTool(s, &mcp.Tool{Name: ToolLate, Description: "Returns at once; at the next tools/call the server receives, sends an elicitation and a log line outside any request.",
		InputSchema: schemaFor[LateIn](names)}, cf.lateTool)
	cf.addRounds(s)
	cf.listens = addListens(s)
}

// meta returns the _meta by which a message names the call of req as
// names says; an error when it cannot.
func (cf *clientFeatures) meta(req *mcp.CallToolRequest, names string) (mcp.Meta, error) {
	switch names {
	case NamesNothing:
		return nil, nil
	case NamesToken:
		return mcp.Meta{"progressToken": req.Params.GetProgressToken()}, nil
	case NamesRequest:
		token, _ := req.Params.GetProgressToken().(string)
		if id := cf.ids.of(token); id != nil {
			return mcp.Meta{"relatedRequestId": id}, nil
		}
		return nil, errors.New("the id of the call's request is not known (names \"request\" works on stdio only)")
	}
	return nil, fmt.Errorf("unknown names %q", names)
}

func (cf *clientFeatures) lateTool(ctx context.Context, req *mcp.CallToolRequest, in LateIn) (*mcp.CallToolResult, any, error) {
	meta, err := cf.meta(req, in.Names)
	if err != nil {
		return nil, nil, err
	}
	ss := req.Session
	cf.mu.Lock()
	defer cf.mu.Unlock()
	cf.late = func() {
		// Outside any request: the go-sdk sends it on the standalone
		// stream over HTTP, which the client may still be opening.
		send := func(f func() error) {
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				err := f()
				if err == nil || !strings.Contains(err.Error(), "not connected") || time.Now().After(deadline) {
					return
				}
			}
		}
		if in.Log {
			send(func() error {
				return ss.Log(context.Background(), &mcp.LoggingMessageParams{Meta: meta, Level: "info", Logger: "fake", Data: "late line"})
			})
		}
		if in.Elicit {
			send(func() error {
				_, err := ss.Elicit(context.Background(), &mcp.ElicitParams{Meta: meta, Message: "about the call that returned",
					RequestedSchema: map[string]any{"type": "object"}})
				return err
			})
		}
	}
	return textResult("armed"), nil, nil
}

// fireLate sends what late armed, once, in the background.
func (cf *clientFeatures) fireLate() {
	cf.mu.Lock()
	f := cf.late
	cf.late = nil
	cf.mu.Unlock()
	if f != nil {
		go f()
	}
}

// requestIDs remembers the JSON-RPC ids of the tools/call requests the
// binary read on stdio, by their progress token: a go-sdk tool does not
// see the id of its request (NamesRequest).
type requestIDs struct {
	mu      sync.Mutex
	byToken map[string]json.RawMessage
}

func (r *requestIDs) of(token string) json.RawMessage {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byToken[token]
}

func (r *requestIDs) note(line []byte) {
	id, token, ok := callToken(line)
	if !ok || id == nil || token == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byToken == nil || len(r.byToken) >= 4096 {
		r.byToken = map[string]json.RawMessage{} // a test's worth
	}
	r.byToken[token] = id
}

// callToken reads the id and the string progress token of a tools/call
// request; ok is false for any other message.
func callToken(msg []byte) (id json.RawMessage, token string, ok bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta struct {
				ProgressToken any `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "tools/call" {
		return nil, "", false
	}
	token, _ = m.Params.Meta.ProgressToken.(string)
	return m.ID, token, true
}

// idSniffer reads stdin for the server and notes the ids of tools/call
// requests (requestIDs).
type idSniffer struct {
	r    io.Reader
	ids  *requestIDs
	line []byte
}

func (s *idSniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if s.ids == nil {
		return n, err
	}
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(s.line)+len(b) <= 1<<20 {
				s.line = append(s.line, b...)
			}
			break
		}
		if len(s.line)+i <= 1<<20 {
			s.line = append(s.line, b[:i]...)
			if bytes.Contains(s.line, []byte(`"tools/call"`)) {
				s.ids.note(s.line)
			}
		}
		s.line, b = s.line[:0], b[i+1:]
	}
	return n, err
}

// failure is a tool error result that names the client's JSON-RPC error
// code, if any.
func failure(what string, err error) *mcp.CallToolResult {
	var wire *jsonrpc.Error
	code := 0
	if errors.As(err, &wire) {
		code = int(wire.Code)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s failed: code %d: %v", what, code, err)}}}
}

func (cf *clientFeatures) ask(ctx context.Context, req *mcp.CallToolRequest, in AskIn) (*mcp.CallToolResult, any, error) {
	params := &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":     map[string]any{"type": "string", "default": AskDefaults["name"]},
			"age":      map[string]any{"type": "integer", "default": AskDefaults["age"]},
			"score":    map[string]any{"type": "number", "default": AskDefaults["score"]},
			"status":   map[string]any{"type": "string", "enum": []any{"active", "inactive", "pending"}, "default": AskDefaults["status"]},
			"verified": map[string]any{"type": "boolean", "default": AskDefaults["verified"]},
			"note":     map[string]any{"type": "string"},
		},
	}}
	if in.Mode == "url" {
		params = &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: AskURL, ElicitationID: "e1"}
	}
	meta, err := cf.meta(req, in.Names)
	if err != nil {
		return nil, nil, err
	}
	params.Meta = meta
	if res, ok := askModern(req, "ask", params, func(r mcp.InputResponse) *mcp.CallToolResult {
		b, _ := json.Marshal(r)
		return textResult("%s", b)
	}); ok {
		return res, nil, nil
	}
	res, err := req.Session.Elicit(ctx, params)
	if err != nil {
		return failure("elicitation", err), nil, nil
	}
	b, _ := json.Marshal(res)
	return textResult("%s", b), nil, nil
}

func (cf *clientFeatures) askMany(ctx context.Context, req *mcp.CallToolRequest, in AskManyIn) (*mcp.CallToolResult, any, error) {
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		answered, fail int
	)
	for range in.Count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "again?", RequestedSchema: map[string]any{"type": "object"}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fail++
			} else {
				answered++
			}
		}()
	}
	wg.Wait()
	return textResult("answered=%d refused=%d", answered, fail), nil, nil
}

func (cf *clientFeatures) sample(ctx context.Context, req *mcp.CallToolRequest, in SampleIn) (*mcp.CallToolResult, any, error) {
	n, size, times := max(in.Messages, 1), max(in.Bytes, 5), max(in.Times, 1)
	msgs := make([]*mcp.SamplingMessage, n)
	for i := range msgs {
		msgs[i] = &mcp.SamplingMessage{Role: "user", Content: &mcp.TextContent{Text: strings.Repeat("x", size)}}
	}
	if modernClient(req.Session) {
		return sampleModern(req, &mcp.CreateMessageParams{Messages: msgs, MaxTokens: 100}, times), nil, nil
	}
	var texts []string
	for range times {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: msgs, MaxTokens: 100})
		if err != nil {
			return failure("sampling", err), nil, nil
		}
		if tc, ok := res.Content.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return textResult("model said: %s", strings.Join(texts, " | ")), nil, nil
}

func (cf *clientFeatures) listRoots(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	answer := func(res *mcp.ListRootsResult) *mcp.CallToolResult {
		uris := []string{}
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		b, _ := json.Marshal(uris)
		return textResult("%s", b)
	}
	if res, ok := askModern(req, "roots", &mcp.ListRootsParams{}, func(r mcp.InputResponse) *mcp.CallToolResult {
		lr, _ := r.(*mcp.ListRootsResult)
		if lr == nil {
			lr = &mcp.ListRootsResult{}
		}
		return answer(lr)
	}); ok {
		return res, nil, nil
	}
	res, err := req.Session.ListRoots(ctx, nil)
	if err != nil {
		return failure("roots/list", err), nil, nil
	}
	return answer(res), nil, nil
}

func (cf *clientFeatures) progress(ctx context.Context, req *mcp.CallToolRequest, in ProgressIn) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	for i := range in.Steps {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Progress: float64(i + 1), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i+1)})
		}
	}
	return textResult("token=%v steps=%d", token, in.Steps), nil, nil
}

func (cf *clientFeatures) log(ctx context.Context, req *mcp.CallToolRequest, in LogIn) (*mcp.CallToolResult, any, error) {
	meta, err := cf.meta(req, in.Names)
	if err != nil {
		return nil, nil, err
	}
	for i := range in.Count {
		var data any = fmt.Sprintf("line %d", i)
		switch {
		case in.Structured:
			data = LogData(i)
		case in.Bytes > 0:
			data = strings.Repeat("y", in.Bytes)
		}
		level := mcp.LoggingLevel(cmp.Or(in.Level, "info"))
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Meta: meta, Level: level, Logger: "fake", Data: data}); err != nil {
			return failure("log", err), nil, nil
		}
	}
	return textResult("logged %d", in.Count), nil, nil
}

func (cf *clientFeatures) urlNeeded(ctx context.Context, req *mcp.CallToolRequest, in URLNeededIn) (*mcp.CallToolResult, any, error) {
	data := json.RawMessage(in.Data)
	if in.Data == "" {
		list := make([]*mcp.ElicitParams, max(in.Count, 1))
		for i := range list {
			list[i] = &mcp.ElicitParams{Mode: cmp.Or(in.Mode, "url"), URL: cmp.Or(in.URL, AskURL), Message: "Connect your account",
				ElicitationID: fmt.Sprintf("need-%d", i+1)}
		}
		data, _ = json.Marshal(map[string]any{"elicitations": list})
	}
	return nil, nil, &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: "This request requires more information.", Data: data}
}

func (cf *clientFeatures) addTool(ctx context.Context, req *mcp.CallToolRequest, in AddToolIn) (*mcp.CallToolResult, any, error) {
	if in.BreakListing {
		cf.mu.Lock()
		cf.broken = true
		cf.mu.Unlock()
	}
	// AddTool tells every session (notifications/tools/list_changed)
	// before this result is sent; in the modern era only those with an
	// open subscriptions/listen.
	notified := cf.listens.notifiesToolsChange(req)
	select {
	case <-cf.changed: // an earlier change's
	default:
	}
	mcp.AddTool(cf.server, &mcp.Tool{Name: in.Name, Description: "added during the session; returns its text",
		InputSchema: schemaFor[EchoIn](nil)},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return textResult("%s", in.Text), nil, nil
		})
	// The result follows the notification, so a client reads the change
	// before the result (on stdio; over HTTP the listen stream is not the
	// call's).
	if !notified {
		return textResult("added %s", in.Name), nil, nil
	}
	select {
	case <-cf.changed:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	return textResult("added %s", in.Name), nil, nil
}

func (cf *clientFeatures) clientCaps(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	// Built by hand: encoding/json writes the go-sdk's Roots struct even
	// when the client sent no roots.
	caps := map[string]any{}
	if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil {
		c := p.Capabilities
		if c.Elicitation != nil {
			caps["elicitation"] = c.Elicitation
		}
		if c.Sampling != nil {
			caps["sampling"] = c.Sampling
		}
		switch {
		case c.RootsV2 != nil:
			caps["roots"] = c.RootsV2
		case c.Roots.ListChanged:
			caps["roots"] = c.Roots
		}
	}
	b, _ := json.Marshal(caps)
	return textResult("%s", b), nil, nil
}
