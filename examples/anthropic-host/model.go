package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// maxRequestBytes bounds the body of one request the scripted model reads.
const maxRequestBytes = 4 << 20

// The wire format of a Messages API request and response, as far as the
// scripted model reads and writes it. It decodes the JSON itself, not
// through the SDK's types, so it checks what went over the wire: a
// message content or a tool_result content sent as a string instead of
// blocks, a schema that is not an object, a missing field, fail it.
type (
	apiRequest struct {
		Model     string       `json:"model"`
		MaxTokens int          `json:"max_tokens"`
		System    []apiBlock   `json:"system"`
		Messages  []apiMessage `json:"messages"`
		Tools     []apiTool    `json:"tools"`
	}
	apiMessage struct {
		Role    string     `json:"role"`
		Content []apiBlock `json:"content"`
	}
	apiTool struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	apiBlock struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
		Content   []apiBlock      `json:"content,omitempty"`
		Source    *apiImageSource `json:"source,omitempty"`
	}
	apiImageSource struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	apiResponse struct {
		ID         string     `json:"id"`
		Type       string     `json:"type"`
		Role       string     `json:"role"`
		Model      string     `json:"model"`
		StopReason string     `json:"stop_reason"`
		Content    []apiBlock `json:"content"`
		Usage      struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
)

// scriptedModel stands in for the Messages API: it answers a fixed
// sequence of responses and checks every request against what the
// script expects (the tools offered, the tool_results and the notice of
// the previous batch). While the sample tool it called runs, it also
// answers the server's sampling request, which the host sends it through
// agtanthropic.Sampler. A request it does not expect gets an HTTP 400 and
// is remembered, so the example fails loudly: it tests the adapter too.
type scriptedModel struct {
	mu       sync.Mutex
	steps    []func(apiRequest) (apiResponse, error)
	next     int
	sent     []string // the tool_use IDs of the last response
	tools    []string // the tool names of the last request
	sampling bool     // the last response called the sample tool
	sampled  int      // the sampling requests answered
	failures []error
}

func newScriptedModel() *scriptedModel {
	m := &scriptedModel{}
	m.steps = []func(apiRequest) (apiResponse, error){m.gather, m.mountArchive, m.mountBroken, m.callBroken, m.sample, m.finish}
	return m
}

// failure is every refused request, nil when none was.
func (m *scriptedModel) failure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return errors.Join(m.failures...)
}

// finished reports whether the whole script was played.
func (m *scriptedModel) finished() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next == len(m.steps)
}

func (m *scriptedModel) turns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next
}

func (m *scriptedModel) samplings() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sampled
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	n := m.next + 1
	resp, err := m.answer(r)
	if err != nil {
		err = fmt.Errorf("request %d: %w", n, err)
		m.failures = append(m.failures, err)
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error",
			"error": map[string]string{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	_ = json.NewEncoder(w).Encode(resp)
}

func (m *scriptedModel) answer(r *http.Request) (apiResponse, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		return apiResponse{}, fmt.Errorf("%s %s is not the Messages API", r.Method, r.URL.Path)
	}
	if r.Header.Get("Authorization") == "" && r.Header.Get("X-Api-Key") == "" {
		return apiResponse{}, errors.New("no credential header")
	}
	if m.next == len(m.steps) {
		return apiResponse{}, fmt.Errorf("the script has only %d answers", len(m.steps))
	}
	var req apiRequest
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxRequestBytes)).Decode(&req); err != nil {
		return apiResponse{}, fmt.Errorf("decoding the request: %w", err)
	}
	if m.sampling && len(req.Tools) == 0 {
		return m.answerSampling(req)
	}
	if err := m.checkRequest(req); err != nil {
		return apiResponse{}, err
	}
	resp, err := m.steps[m.next](req)
	if err != nil {
		return apiResponse{}, err
	}
	m.next++
	resp.ID, resp.Type, resp.Role, resp.Model = fmt.Sprintf("msg_%02d", m.next), "message", "assistant", model
	m.tools = toolNames(req)
	m.sent, m.sampling = nil, false
	for _, b := range resp.Content {
		if b.Type == "tool_use" {
			m.sent = append(m.sent, b.ID)
			m.sampling = m.sampling || b.Name == sampleTool
		}
	}
	return resp, nil
}

// sampleTool is the fake server's sampling tool, as the notes mount
// offers it; sampleText is what its call asks the model (sampleArgs: one
// user message of 8 bytes).
const (
	sampleTool = "mcp__notes__sample"
	sampleArgs = `{"bytes":8}`
	sampleText = "xxxxxxxx"
)

// answerSampling answers the server's sampling request, which the host
// sent through agtanthropic.Sampler: the server's one message, no tools
// and no system prompt, and max_tokens capped at the host's
// maxSampleTokens (the server asked for 100).
func (m *scriptedModel) answerSampling(req apiRequest) (apiResponse, error) {
	if req.Model != model || req.MaxTokens != maxSampleTokens || len(req.System) != 0 {
		return apiResponse{}, fmt.Errorf("sampling: model %q, max_tokens %d, %d system blocks; want %q, %d, none", req.Model, req.MaxTokens, len(req.System), model, maxSampleTokens)
	}
	if len(req.Messages) != 1 || req.Messages[0].Role != "user" || len(req.Messages[0].Content) != 1 ||
		req.Messages[0].Content[0].Type != "text" || req.Messages[0].Content[0].Text != sampleText {
		return apiResponse{}, errors.New("sampling: the messages are not the server's one user text")
	}
	m.sampled++
	return apiResponse{ID: fmt.Sprintf("msg_sample_%02d", m.sampled), Type: "message", Role: "assistant", Model: model,
		StopReason: "end_turn", Content: []apiBlock{{Type: "text", Text: "a row of eight x"}}}, nil
}

// checkRequest checks what every request must hold: the model and
// max_tokens, object schemas for every tool, and after the first turn the
// previous response kept in the history and one tool_result per tool_use
// of it, in order.
func (m *scriptedModel) checkRequest(req apiRequest) error {
	if req.Model != model || req.MaxTokens <= 0 {
		return errors.New("model or max_tokens missing")
	}
	for _, t := range req.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema.Type != "object" {
			return fmt.Errorf("tool %s: input_schema is not an object schema", t.Name)
		}
	}
	if want := 2*m.next + 1; len(req.Messages) != want {
		return fmt.Errorf("%d messages, want %d", len(req.Messages), want)
	}
	if m.next == 0 {
		return nil
	}
	assistant, user := req.Messages[len(req.Messages)-2], req.Messages[len(req.Messages)-1]
	var uses, results []string
	for _, b := range assistant.Content {
		if b.Type == "tool_use" {
			uses = append(uses, b.ID)
		}
	}
	for _, b := range user.Content {
		if b.Type == "tool_result" {
			results = append(results, b.ToolUseID)
		}
	}
	if assistant.Role != "assistant" || !slices.Equal(uses, m.sent) {
		return fmt.Errorf("the history lost the last response: tool_use %v, want %v", uses, m.sent)
	}
	if user.Role != "user" || !slices.Equal(results, m.sent) {
		return fmt.Errorf("tool_result for %v, want one for each of %v in order", results, m.sent)
	}
	return nil
}

// gather: parallel calls to both mounted servers, one of them denied by
// the host's policy.
func (m *scriptedModel) gather(req apiRequest) (apiResponse, error) {
	names := toolNames(req)
	for _, want := range []string{"mcp__notes__search", "mcp__notes__note_delete", "mcp__media__content", "resource_write"} {
		if !slices.Contains(names, want) {
			return apiResponse{}, fmt.Errorf("tool %s is not offered", want)
		}
	}
	if hasPrefix(names, "mcp__archive__") {
		return apiResponse{}, errors.New("archive's tools are offered before it is mounted")
	}
	return toolUse("I'll search the notes, fetch the chart and delete the stale note, all at once.",
		call("toolu_01", "mcp__notes__search", `{"query":"alpha","limit":3}`),
		call("toolu_02", "mcp__media__content", `{"kind":"image"}`),
		call("toolu_03", "mcp__notes__note_delete", `{"id":"n1","caller":"ada"}`),
	), nil
}

// mountArchive: checks the three results (text, an image block, the
// denial), then mounts archive through the framework tool.
func (m *scriptedModel) mountArchive(req apiRequest) (apiResponse, error) {
	res := lastResults(req)
	if res[0].IsError || len(res[0].Content) != 1 || res[0].Content[0].Type != "text" {
		return apiResponse{}, errors.New("the search result is not one text block")
	}
	if err := checkImage(res[1]); err != nil {
		return apiResponse{}, err
	}
	if code := errorCode(res[2]); !res[2].IsError || code != "permission_denied" {
		return apiResponse{}, fmt.Errorf("the delete: is_error %t, code %q, want a permission_denied error", res[2].IsError, code)
	}
	return toolUse("Deleting is not allowed. I'll mount the archive on myself.",
		call("toolu_04", "resource_write", `{"kind":"agent","reference":"assistant","add":{"mcps":["archive"]}}`),
	), nil
}

// mountBroken: checks that archive's tools are now offered (the Run
// refreshed at the batch boundary), uses one, and mounts broken.
func (m *scriptedModel) mountBroken(req apiRequest) (apiResponse, error) {
	if res := lastResults(req); res[0].IsError {
		return apiResponse{}, errors.New("the mount of archive failed")
	}
	if n := len(lastUser(req).Content); n != 1 {
		return apiResponse{}, fmt.Errorf("%d blocks after a refresh that worked, want only the tool_result", n)
	}
	names := toolNames(req)
	if !hasPrefix(names, "mcp__archive__") || len(names) <= len(m.tools) {
		return apiResponse{}, fmt.Errorf("the tools did not grow by archive's: %d before, %d now", len(m.tools), len(names))
	}
	return toolUse("The archive is mounted. I'll echo through it, and mount the broken server too.",
		call("toolu_05", "mcp__archive__echo", `{"text":"hello from archive"}`),
		call("toolu_06", "resource_write", `{"kind":"agent","reference":"assistant","add":{"mcps":["broken"]}}`),
	), nil
}

// callBroken: checks the echo, the saved-but-not-loaded notice after the
// tool_results and the unchanged tool list, then calls a tool of the
// mount that did not load.
func (m *scriptedModel) callBroken(req apiRequest) (apiResponse, error) {
	res := lastResults(req)
	if res[0].IsError || len(res[0].Content) != 1 || res[0].Content[0].Text != "hello from archive" {
		return apiResponse{}, errors.New("the echo through archive did not come back")
	}
	if res[1].IsError {
		return apiResponse{}, errors.New("the write that mounts broken failed; it should be saved")
	}
	// The notice is the last block of the result of the write that caused
	// it, and comes once: no text block repeats it after the tool_results.
	if n := len(res[1].Content); n < 2 || !isLoadFailed(res[1].Content[n-1]) {
		return apiResponse{}, errors.New("no notice naming broken in the result of the write")
	}
	if n := len(lastUser(req).Content); n != 2 {
		return apiResponse{}, fmt.Errorf("%d blocks in the user message, want the 2 tool_results", n)
	}
	if names := toolNames(req); !slices.Equal(names, m.tools) {
		return apiResponse{}, fmt.Errorf("the tools changed although the refresh failed: %v", names)
	}
	return toolUse("The broken server did not load; let me try its tool anyway.",
		call("toolu_07", "mcp__broken__echo", `{"text":"anyone there?"}`),
	), nil
}

// sample: checks that the Run rejected the call of a tool it does not
// have, then calls the notes server's sample tool, which asks the host's
// model during the call (sampling).
func (m *scriptedModel) sample(req apiRequest) (apiResponse, error) {
	res := lastResults(req)
	if code := errorCode(res[0]); !res[0].IsError || code != "unknown_tool" {
		return apiResponse{}, fmt.Errorf("the call of a tool not offered: is_error %t, code %q, want unknown_tool", res[0].IsError, code)
	}
	return toolUse("That tool does not exist. Let the notes server ask me something.",
		call("toolu_08", sampleTool, sampleArgs),
	), nil
}

// finish: checks that the sample tool got the answer to its sampling
// request, and ends the turn.
func (m *scriptedModel) finish(req apiRequest) (apiResponse, error) {
	res := lastResults(req)
	if m.sampled != 1 {
		return apiResponse{}, fmt.Errorf("%d sampling requests during the sample call, want 1", m.sampled)
	}
	if res[0].IsError || len(res[0].Content) != 1 || res[0].Content[0].Text != "model said: a row of eight x" {
		return apiResponse{}, errors.New("the sample tool did not return the model's answer to its sampling request")
	}
	return apiResponse{StopReason: "end_turn", Content: []apiBlock{{Type: "text", Text: "Done: the notes searched, the chart fetched, the archive mounted, a sampling request answered. Deleting was refused and the broken server did not load."}}}, nil
}

// isLoadFailed reports whether b is the Run's notice that the mount of
// broken was saved but did not load.
func isLoadFailed(b apiBlock) bool {
	return b.Type == "text" && strings.HasPrefix(b.Text, "configuration saved, but load failed: ") &&
		strings.Contains(b.Text, "mount "+string(brokenRef))
}

// checkImage checks that a tool_result carries the fake server's PNG as
// an image block.
func checkImage(res apiBlock) error {
	if res.IsError || len(res.Content) != 1 || res.Content[0].Type != "image" || res.Content[0].Source == nil {
		return errors.New("the chart is not one image block")
	}
	src := res.Content[0].Source
	png, err := base64.StdEncoding.DecodeString(src.Data)
	if src.Type != "base64" || src.MediaType != "image/png" || err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		return fmt.Errorf("the image block is not a base64 PNG (source type %q, media type %q)", src.Type, src.MediaType)
	}
	return nil
}

// errorCode is the code of a tool_result's ToolError, "" when its text is
// not one.
func errorCode(res apiBlock) string {
	if len(res.Content) != 1 {
		return ""
	}
	var te struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(res.Content[0].Text), &te) != nil {
		return ""
	}
	return te.Error.Code
}

func lastUser(req apiRequest) apiMessage { return req.Messages[len(req.Messages)-1] }

// lastResults are the tool_result blocks of the last user message, which
// checkRequest has matched one to one with the last tool_use blocks.
func lastResults(req apiRequest) []apiBlock {
	var out []apiBlock
	for _, b := range lastUser(req).Content {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

func toolNames(req apiRequest) []string {
	names := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

func hasPrefix(names []string, prefix string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

func call(id, name, input string) apiBlock {
	return apiBlock{Type: "tool_use", ID: id, Name: name, Input: json.RawMessage(input)}
}

// toolUse is a response with a text block and tool_use blocks; answer
// fills in its ID and the fields every response has.
func toolUse(text string, calls ...apiBlock) apiResponse {
	return apiResponse{StopReason: "tool_use", Content: append([]apiBlock{{Type: "text", Text: text}}, calls...)}
}
