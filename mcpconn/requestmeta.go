package mcpconn

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bounds of the _meta fields a caller adds to a tools/call request
// (WithRequestMeta): past them, the extra fields are dropped, not an error.
const (
	// maxRequestMetaKeys is the number of fields at most.
	maxRequestMetaKeys = 16
	// maxRequestMetaBytes bounds the fields' keys and values together.
	maxRequestMetaBytes = 4 << 10
)

type requestMetaKey struct{}

// WithRequestMeta returns a context whose tools/call requests
// (Session.CallTool) carry the fields of meta in their params._meta, as
// strings: the W3C trace context (traceparent, tracestate) an
// OpenTelemetry propagator writes, for example. A context that already
// carries fields keeps them; a key in meta replaces the earlier value.
//
// The fields never replace what agt sets itself: progressToken (every call
// carries its own) and the keys with a prefix reserved for MCP are
// dropped, under either revision of the rule a server may apply: a second
// label modelcontextprotocol or mcp (io.modelcontextprotocol/), or such a
// label followed by another (modelcontextprotocol.io/, tools.mcp.com/),
// without regard to case. So is a key that is not a valid
// _meta key of the MCP specification: an optional prefix of dot-separated
// labels (each starting with a letter, ending with a letter or digit,
// letters, digits and hyphens inside) and a slash, then a name that starts
// and ends with a letter or digit, with letters, digits, hyphens,
// underscores and dots inside. The fields are bounded: at most
// 16 fields of at most 4 KiB of keys
// and values together, taken in the order of their keys; the rest are
// dropped.
func WithRequestMeta(ctx context.Context, meta map[string]string) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	merged := map[string]string{}
	for k, v := range requestMeta(ctx) {
		merged[k] = v
	}
	for k, v := range meta {
		if requestMetaKeyAllowed(k) {
			merged[k] = v
		}
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kept := make(map[string]string, min(len(keys), maxRequestMetaKeys))
	size := 0
	for _, k := range keys {
		if len(kept) == maxRequestMetaKeys {
			break
		}
		n := len(k) + len(merged[k])
		if size+n > maxRequestMetaBytes {
			continue // a smaller field after it may still fit
		}
		size += n
		kept[k] = merged[k]
	}
	return context.WithValue(ctx, requestMetaKey{}, kept)
}

// requestMeta returns the fields WithRequestMeta put in ctx; never
// modify the map.
func requestMeta(ctx context.Context) map[string]string {
	m, _ := ctx.Value(requestMetaKey{}).(map[string]string)
	return m
}

// setRequestMeta puts the context's fields into the _meta of fresh
// params, whose _meta is still empty; the progress token set after it is
// one more field (WithRequestMeta never keeps that key).
func setRequestMeta(ctx context.Context, params *mcp.CallToolParams) {
	m := requestMeta(ctx)
	if len(m) == 0 {
		return
	}
	meta := make(map[string]any, len(m)+1)
	for k, v := range m {
		meta[k] = v
	}
	params.SetMeta(meta)
}

// requestMetaKeyAllowed reports whether a caller may set key: a valid
// _meta key that agt does not set and whose prefix MCP does not reserve.
func requestMetaKeyAllowed(key string) bool {
	if key == "progressToken" || len(key) > maxRequestMetaBytes {
		return false
	}
	prefix, name := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		prefix, name = key[:i], key[i+1:]
		labels := strings.Split(prefix, ".")
		for _, l := range labels {
			if !metaLabel(l) {
				return false
			}
		}
		if reservedPrefix(labels) {
			return false
		}
	}
	return metaName(name)
}

// reservedPrefix reports whether MCP reserves a prefix of these labels
// under either revision of the rule, as a server may apply either: a
// second label modelcontextprotocol or mcp (2025-11-25:
// io.modelcontextprotocol/), or such a label at any place but the last
// (2025-06-18: modelcontextprotocol.io/, mcp.dev/, tools.mcp.com/).
// Labels are compared without case, as domain names are.
func reservedPrefix(labels []string) bool {
	for i, l := range labels {
		if (i == 1 || i < len(labels)-1) && (strings.EqualFold(l, "modelcontextprotocol") || strings.EqualFold(l, "mcp")) {
			return true
		}
	}
	return false
}

// metaLabel: a letter first, a letter or digit last, letters, digits and
// hyphens inside.
func metaLabel(l string) bool {
	if l == "" || !isLetter(l[0]) || !isAlnum(l[len(l)-1]) {
		return false
	}
	for i := 1; i < len(l)-1; i++ {
		if c := l[i]; !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// metaName: a letter or digit first and last, letters, digits, hyphens,
// underscores and dots inside. The specification allows an empty name;
// a field with no name carries nothing a server can tell apart, so it is
// refused here.
func metaName(n string) bool {
	if n == "" || !isAlnum(n[0]) || !isAlnum(n[len(n)-1]) {
		return false
	}
	for i := 1; i < len(n)-1; i++ {
		if c := n[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool  { return isLetter(c) || '0' <= c && c <= '9' }
