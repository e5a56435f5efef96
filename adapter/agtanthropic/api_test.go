package agtanthropic_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agtsdk/agt/run"
)

// runOrigin is the Origin a test passes a Sampler called directly.
var runOrigin = run.Origin{}

// messagesRequest is what a test's scripted Messages API reads of a
// request: decoded from the wire, not through the SDK's types.
type messagesRequest struct {
	Model         string            `json:"model"`
	MaxTokens     int64             `json:"max_tokens"`
	System        []apiBlock        `json:"system"`
	StopSequences []string          `json:"stop_sequences"`
	Messages      []apiMessage      `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	Temperature   *float64          `json:"temperature"`
	Metadata      json.RawMessage   `json:"metadata"`
}

type apiMessage struct {
	Role    string     `json:"role"`
	Content []apiBlock `json:"content"`
}

type apiBlock struct {
	Type      string     `json:"type"`
	Text      string     `json:"text"`
	ToolUseID string     `json:"tool_use_id"`
	IsError   bool       `json:"is_error"`
	Content   []apiBlock `json:"content"`
}

// scriptedAPI is a Messages API on 127.0.0.1 that answers each request
// with answer's status and body, reached through the real SDK client.
type scriptedAPI struct {
	client sdk.Client
	mu     sync.Mutex
	n      int
}

func newScriptedAPI(t testing.TB, answer func(messagesRequest) (status int, body string)) *scriptedAPI {
	t.Helper()
	a := &scriptedAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.n++
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		var req messagesRequest
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if r.URL.Path != "/v1/messages" || err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"not a Messages API request"}}`)
			return
		}
		status, out := answer(req)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(srv.Close)
	a.client = sdk.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(srv.URL),
		option.WithAPIKey("not-a-key"),
		option.WithHTTPClient(srv.Client()),
		option.WithMaxRetries(0),
	)
	return a
}

// requests is how many requests the API got.
func (a *scriptedAPI) requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// textAnswer is a Messages API response of one text block.
func textAnswer(text string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "msg_s", "type": "message", "role": "assistant", "model": "scripted", "stop_reason": "end_turn",
		"content": []map[string]string{{"type": "text", "text": text}},
		"usage":   map[string]int{"input_tokens": 1, "output_tokens": 1},
	})
	return string(b)
}
