package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// The tools of FaultHostileContent, which lists HostileContentTools tools:
// these four and fillers ("filler_00"...) that answer as ToolPlain does.
const (
	HostileContentTools = 25
	// ToolPlain answers with the text "ok".
	ToolPlain = "plain"
	// ToolDeepOutputSchema is listed with an outputSchema nested
	// DeepOutputSchemaLevels deep (about 6 KB); it answers as ToolPlain.
	ToolDeepOutputSchema = "deep_output_schema"
	// ToolDeepResult answers with a result whose structuredContent nests
	// DeepResultLevels deep (about 200 KB).
	ToolDeepResult = "deep_result"
	// ToolNullIDError first sends an error answer whose id is null (an
	// answer to no request), then answers as ToolPlain; with
	// -json-response, whose body holds one message, only the error.
	ToolNullIDError = "null_id_error"
)

// How deep FaultHostileContent nests.
const (
	DeepOutputSchemaLevels = 1001
	DeepResultLevels       = 100_000
)

func hostileFault(faults []Fault) (Fault, bool) {
	for _, f := range faults {
		switch f {
		case FaultRefuseInitialize, FaultOldProtocol, FaultEndlessLine, FaultNotificationFlood, FaultEndlessListing, FaultHostileContent:
			return f, true
		}
	}
	return "", false
}

// hostileRequest is what the hostile faults read of a request.
type hostileRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// hostileContent returns the lines FaultHostileContent answers req with.
// A modern one (EraModern) answers server/discover and refuses
// initialize.
func hostileContent(req hostileRequest, era Era) []string {
	modern := era == EraModern
	switch {
	case req.Method == "server/discover" && modern:
		return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":[%q],"capabilities":{"tools":{"listChanged":true}},`+
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":%q,"version":%q}}}}`, req.ID, ModernProtocolVersion, ServerName, ServerVersion)}
	case req.Method == "initialize" && modern:
		return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":[%q]}}}`, req.ID, ModernProtocolVersion)}
	}
	switch req.Method {
	case "initialize":
		return []string{initializeResult(req.ID, "2025-11-25")}
	case "tools/list":
		var b strings.Builder
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, req.ID)
		names := []string{ToolPlain, ToolDeepResult, ToolNullIDError, ToolDeepOutputSchema}
		for i := len(names); i < HostileContentTools; i++ {
			names = append(names, fmt.Sprintf("filler_%02d", i-4))
		}
		for i, name := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":%q,"inputSchema":{"type":"object"}`, name)
			if name == ToolDeepOutputSchema {
				levels := DeepOutputSchemaLevels - 1
				b.WriteString(`,"outputSchema":` + strings.Repeat(`{"a":`, levels) + `{}` + strings.Repeat(`}`, levels))
			}
			b.WriteByte('}')
		}
		b.WriteString(`]}}`)
		return []string{b.String()}
	case "tools/call":
		plain := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, req.ID)
		switch req.Params.Name {
		case ToolDeepResult:
			return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"deep"}],"structuredContent":{"a":%s%s}}}`,
				req.ID, strings.Repeat("[", DeepResultLevels-1), strings.Repeat("]", DeepResultLevels-1))}
		case ToolNullIDError:
			return []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, plain}
		}
		return []string{plain}
	}
	return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)}
}

// serveHostileHTTP is the handler of FaultHostileContent over streamable
// HTTP, stateless: each POSTed request is answered with the lines
// hostileContent gives, as events (or, with jsonResponse, the first line
// as the body).
func serveHostileHTTP(jsonResponse bool, era Era) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req hostileRequest
		if json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req) != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		lines := hostileContent(req, era)
		if jsonResponse {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, lines[0])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, line := range lines {
			_, _ = io.WriteString(w, "event: message\ndata: "+line+"\n\n")
		}
	})
}

// serveHostile answers stdin line by line as the fault says, until stdin
// closes or stdout breaks.
func serveHostile(f Fault, pageSize int, era Era, stdin io.Reader, stdout io.Writer) int {
	if pageSize <= 0 {
		pageSize = EndlessListingPageTools
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(nil, 1<<20)
	pages := 0
	for sc.Scan() {
		var req hostileRequest
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		var err error
		switch {
		case f == FaultHostileContent:
			for _, line := range hostileContent(req, era) {
				if err == nil {
					err = writeLine(w, line)
				}
			}
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
