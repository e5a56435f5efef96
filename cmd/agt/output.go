package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// writeJSON prints v as indented JSON, without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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

// oneLine keeps the first line of s, at most n runes.
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// explain adds what to do next to the errors every command can meet.
func explain(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"agt: ", "boltrepo: ", "pgrepo: ", "resource: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	msg = strings.ReplaceAll(msg, ": resource: ", ": ")
	switch {
	case errors.Is(err, resource.ErrNotFound) && strings.HasPrefix(msg, "mcp:"):
		return msg + " (see 'agt mcp list'; register it with 'agt mcp create')"
	case errors.Is(err, resource.ErrNotFound) && strings.HasPrefix(msg, "agent:"):
		return msg + " (see 'agt agent list'; create it with 'agt agent create')"
	case errors.Is(err, resource.ErrNotFound) && strings.Contains(msg, "agt mcp create"):
		return msg // it already says what to do
	case errors.Is(err, resource.ErrNotFound):
		return msg + " (see 'agt mcp list' and 'agt agent list')"
	case errors.Is(err, resource.ErrExists):
		return msg + " (change it with 'update', or 'delete' it first)"
	case errors.Is(err, resource.ErrConflict):
		return msg
	case strings.HasSuffix(msg, ": invalid database") || strings.HasSuffix(msg, ": version mismatch"):
		return msg + "\nnext: this file is not a bbolt store; point --db (or $AGT_STORE) at an agt store, or at a new path to start one"
	case errors.Is(err, boltrepo.ErrDamaged):
		// boltrepo says what to do in Go terms; an operator gets the commands.
		what, _, _ := strings.Cut(msg, ": restore it from a backup")
		what = strings.Replace(what, "open the store: boltrepo: ", "the store ", 1)
		return what + ".\n" +
			"next: restore the file from a backup, or point --db (or $AGT_STORE) at a new path to start an empty store; " +
			"'bbolt check FILE' shows what is damaged (go install go.etcd.io/bbolt/cmd/bbolt@latest)"
	case strings.Contains(msg, "is locked by another process"):
		// boltrepo's advice is for Go code; an operator needs the host's side.
		what, _, _ := strings.Cut(msg, "; close it there")
		what = strings.Replace(what, "open the store: boltrepo: ", "the store ", 1)
		return what + ": a host holds it open without shared mode.\n" +
			"next: stop that host, or let it open the store in shared mode (agt.Options{Bolt: &boltrepo.Options{Shared: true}}) so that agt can work beside it; hosts on several machines share a postgres:// store instead"
	}
	return msg
}

// displayURL is a URL as human output shows it: the user info and the query,
// where tokens often travel, are replaced by ***; the path is kept so that
// the operator recognises the endpoint. --json shows the URL as stored.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "(not an absolute URL; --json shows it)"
	}
	shown := *u
	shown.User, shown.RawQuery, shown.ForceQuery, shown.Fragment, shown.RawFragment = nil, "", false, "", ""
	s := shown.String()
	if u.User != nil {
		s = strings.Replace(s, "://", "://***@", 1)
	}
	if u.RawQuery != "" || u.ForceQuery {
		s += "?***"
	}
	if u.Fragment != "" {
		s += "#***"
	}
	return s
}

// controlFilter replaces terminal control characters in everything agt
// prints (C0 but newline and tab, DEL, and the C1 range as UTF-8) with '?'.
// Names, descriptions, errors and stderr lines of MCP servers are hostile
// text: they must not move the cursor, retitle or recolour the operator's
// terminal. agt's own output, and JSON (which escapes them), has none.
type controlFilter struct{ w io.Writer }

func (f controlFilter) Write(p []byte) (int, error) {
	if !hasControl(p) {
		return f.w.Write(p)
	}
	clean := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\n' || c == '\t':
			clean = append(clean, c)
		case c < 0x20 || c == 0x7f:
			clean = append(clean, '?')
		case c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			clean = append(clean, '?')
			i++
		default:
			clean = append(clean, c)
		}
	}
	if _, err := f.w.Write(clean); err != nil {
		return 0, err
	}
	return len(p), nil
}

func hasControl(p []byte) bool {
	for i, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f {
			return true
		}
	}
	return false
}
