package mcpconn

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Issue 25 item 6: a modern stream's event ids are dropped, read whole or
// a byte at a time, so the go-sdk never resumes it (a modern server
// refuses the GET, and the go-sdk then fails the connection); every other
// line passes unchanged, and an event that was only ids goes whole. A
// legacy stream keeps them: its resumption stays.
func TestDropEventIDs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in, want string
	}{
		{"an answer", "id: 1\nevent: message\ndata: {}\n\n", "event: message\ndata: {}\n\n"},
		{"CRLF", "id: 1\r\nevent: message\r\ndata: {}\r\n\r\n", "event: message\r\ndata: {}\r\n\r\n"},
		{"id last", "data: {}\nid: 7\n\n", "data: {}\n\n"},
		{"a priming event", "id: 1\ndata: \n\nid: 2\n\ndata: {}\n\n", "data: \n\ndata: {}\n\n"},
		{"with a retry", "id: 1\nretry: 500\ndata: \n\n", "retry: 500\ndata: \n\n"},
		{"id inside data", "data: id: 1\n\n", "data: id: 1\n\n"},
		{"a field that starts alike", "idx: 1\nid\ndata: {}\n\n", "idx: 1\nid\ndata: {}\n\n"},
		{"an empty id", "id:\ndata: {}\n\n", "data: {}\n\n"},
		{"cut by the end", "data: {}\n\nid: 2", "data: {}\n\n"},
		{"blank lines", "\n\r\n\n", "\n\r\n\n"},
	} {
		for _, legacy := range []bool{false, true} {
			for _, oneByte := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tt.in)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				got, err := io.ReadAll(&eventBody{ReadCloser: io.NopCloser(r), guard: testGuard(), dropIDs: !legacy})
				want := tt.want
				if legacy {
					want = tt.in
				}
				if err != nil || string(got) != want {
					t.Errorf("%s (legacy %v, one byte %v): got %q, %v; want %q", tt.name, legacy, oneByte, got, err, want)
				}
			}
		}
	}
}
