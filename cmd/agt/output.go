package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agtsdk/agt/internal/resourcefn"
	agttext "github.com/agtsdk/agt/internal/text"
)

// writeJSON prints v as indented JSON, without HTML escaping, with the
// characters controlFilter would replace escaped (escapeUnsafe): the JSON
// stays exact.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeUnsafe(buf.Bytes()))
	return err
}

// newTable aligns columns separated by tabs; call Flush when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// since renders a time as a short age for tables.
func since(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	default:
		return t.Format("2006-01-02")
	}
}

// Widths of server-supplied text in human output, in characters: longer
// text is cut to one character less, "…" and its whole size in bytes.
// --json prints it whole.
const (
	// maxCellWidth bounds a name in a table or a heading: a server's name
	// and version, a protocol version, a tool's name or source.
	maxCellWidth = 80
	// maxDescriptionWidth bounds the first line of a tool's description in
	// a table.
	maxDescriptionWidth = 70
	// maxLineWidth bounds an error, a notice, or one line of a server's
	// stderr.
	maxLineWidth = 1000
)

// shown makes text that may come from an MCP server safe to print as one
// table cell or one line: every character text.Unsafe reports (agt's one rule), line breaks
// and tabs included, becomes '?', as do invalid UTF-8 bytes; text longer
// than width characters is cut (see maxCellWidth). It reads at most width
// characters of s, however long s is.
func shown(s string, width int) string {
	var b strings.Builder
	n, cut := 0, 0
	for _, r := range s {
		if n == width {
			return b.String()[:cut] + "…" + fmt.Sprintf(" (%d bytes)", len(s))
		}
		if n == width-1 {
			cut = b.Len()
		}
		if r == utf8.RuneError || agttext.Unsafe(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// oneLine is shown of the first line of s, for text whose first line says
// enough (a description); the other lines are left out.
func oneLine(s string, width int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexFunc(s, isLineBreak); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return shown(s, width)
}

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// writeServerOutput prints what a stdio server wrote, each line made safe
// by shown, under a heading: the non-JSON first line of its stdout, then
// its stderr tail.
func writeServerOutput(w io.Writer, indent, stdoutHead, stderrTail string) {
	for _, out := range []struct{ heading, text string }{
		{"server stdout (first line, not JSON-RPC)", stdoutHead},
		{"server stderr (last lines)", stderrTail},
	} {
		text := strings.TrimSpace(out.text)
		if text == "" {
			continue
		}
		fmt.Fprintf(w, "%s%s:\n", indent, out.heading)
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(w, "%s  | %s\n", indent, shown(strings.TrimSuffix(line, "\r"), maxLineWidth))
		}
	}
}

// displayURL is a URL as human output shows it: what resourcefn.MaskURL
// hides (user info, query, fragment, a path that holds a credential)
// reads [redacted] (resource.Mask, as in masked arguments), so that the
// operator recognises the endpoint without its credentials. hidden reports whether anything was hidden. --json shows
// the URL as stored.
func displayURL(raw string) (shown string, hidden bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "(not an absolute URL; --json shows it)", false
	}
	masked := resourcefn.MaskURL(raw)
	return masked, masked != raw
}

// controlFilter replaces what text.Unsafe reports, except newline and tab,
// and invalid UTF-8 bytes, with '?' in everything agt prints: the last
// guard behind shown, which also replaces line breaks and tabs in server
// text (only agt's own newlines end lines, and only its own tabs separate
// table columns). agt's own output has none, and JSON output has them
// escaped (escapeUnsafe). Every Write of agt holds whole characters.
type controlFilter struct{ w io.Writer }

func (f controlFilter) Write(p []byte) (int, error) {
	if !mayBeUnsafe(p) {
		return f.w.Write(p)
	}
	clean := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == '\n' || r == '\t':
			clean = append(clean, byte(r))
		case r == utf8.RuneError && size == 1, agttext.Unsafe(r):
			clean = append(clean, '?')
		default:
			clean = append(clean, p[i:i+size]...)
		}
		i += size
	}
	if _, err := f.w.Write(clean); err != nil {
		return 0, err
	}
	return len(p), nil
}

// mayBeUnsafe is false for text of printable ASCII, newlines and tabs,
// which controlFilter passes on as it is.
func mayBeUnsafe(p []byte) bool {
	for _, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return true
		}
	}
	return false
}

// escapeUnsafe writes the characters text.Unsafe reports in JSON text as
// \uXXXX escapes (encoding/json leaves DEL, the C1 controls and the format
// characters raw). Outside strings JSON holds only ASCII punctuation and
// whitespace, so the escaped JSON decodes to the same values, and
// controlFilter has nothing left to change.
func escapeUnsafe(js []byte) []byte {
	if !mayBeUnsafe(js) {
		return js
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(js)+16)
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		if r == '\n' || r == '\t' || r == utf8.RuneError && size == 1 || !agttext.Unsafe(r) {
			out = append(out, js[i:i+size]...)
			i += size
			continue
		}
		units := []rune{r}
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			units = []rune{r1, r2}
		}
		for _, u := range units {
			out = append(out, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
		}
		i += size
	}
	return out
}
