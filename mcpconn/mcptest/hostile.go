package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// What the hostile faults send.
const (
	RefuseInitializeCode    = -32600
	RefuseInitializeMessage = "fakemcp refuses this client (fault refuse-initialize)"
	OldProtocolVersion      = "1999-01-01"
	// EndlessListingPageTools is how many tools one FaultEndlessListing
	// page lists.
	EndlessListingPageTools = 140_000
)

func hostileFault(faults []Fault) (Fault, bool) {
	for _, f := range faults {
		switch f {
		case FaultRefuseInitialize, FaultOldProtocol, FaultEndlessLine, FaultNotificationFlood, FaultEndlessListing:
			return f, true
		}
	}
	return "", false
}

// serveHostile answers stdin line by line as the fault says, until stdin
// closes or stdout breaks.
func serveHostile(f Fault, pageSize int, stdin io.Reader, stdout io.Writer) int {
	if pageSize <= 0 {
		pageSize = EndlessListingPageTools
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(nil, 1<<20)
	pages := 0
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		var err error
		switch {
		case req.Method == "initialize" && f == FaultRefuseInitialize:
			err = writeLine(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, req.ID, RefuseInitializeCode, RefuseInitializeMessage))
		case req.Method == "initialize" && f == FaultOldProtocol:
			err = writeLine(w, initializeResult(req.ID, OldProtocolVersion))
		case req.Method == "initialize" && f == FaultEndlessLine:
			if _, err = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"`, req.ID); err == nil {
				chunk := bytes.Repeat([]byte("a"), 1<<16)
				for err == nil {
					_, err = w.Write(chunk)
				}
			}
		case req.Method == "initialize":
			err = writeLine(w, initializeResult(req.ID, "2025-11-25"))
			if err == nil && f == FaultNotificationFlood {
				note := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}` + "\n")
				for err == nil {
					_, err = w.Write(note)
				}
			}
		case req.Method == "tools/list" && f == FaultEndlessListing:
			pages++
			err = writeLine(w, endlessListingPage(req.ID, pages, pageSize))
		default:
			err = writeLine(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID))
		}
		if err != nil {
			return 0
		}
	}
	return 0
}

func writeLine(w *bufio.Writer, line string) error {
	if _, err := w.WriteString(line + "\n"); err != nil {
		return err
	}
	return w.Flush()
}

func initializeResult(id json.RawMessage, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":%q,"version":%q}}}`,
		id, version, ServerName, ServerVersion)
}

func endlessListingPage(id json.RawMessage, page, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, id)
	for i := range size {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d_%d","inputSchema":{"type":"object"}}`, page, i)
	}
	fmt.Fprintf(&b, `],"nextCursor":"page-%d"}}`, page+1)
	return b.String()
}
