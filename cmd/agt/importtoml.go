package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/agtsdk/agt/resource"
)

// Bounds on a Codex config.toml, checked before it is parsed: the TOML
// parser's time grows with the file and, faster, with the nesting of
// inline tables and arrays (measured: 0.6 s for 1,000 nested inline
// tables; 4 to 7 s for 4 MiB of ordinary tables; 1.3 s for 512 KiB of
// tables nested 4 deep). A Codex config is a few KiB (1,000 servers, the
// import's limit, fit in about 150 KiB) and nests 2 deep ([[tables]], an
// array in args).
const (
	maxTOMLFile  = 256 << 10
	maxTOMLDepth = 4
)

// parseCodexFile reads Codex's config.toml: [mcp_servers.NAME] tables with
// command, args, env, cwd, startup_timeout_sec, tool_timeout_sec, or url
// and http_headers for a streamable HTTP server; enabled_tools and
// disabled_tools carry over under the same names. The variables Codex
// reads (bearer_token_env_var, env_http_headers, env_vars) become
// ${env:NAME} references; enabled is reported in a note and left out.
func parseCodexFile(path string, data []byte, category string) ([]importEntry, error) {
	if len(data) > maxTOMLFile {
		return nil, fmt.Errorf("%s is %d bytes; a TOML import file may have at most %d", path, len(data), maxTOMLFile)
	}
	if err := checkTOMLDepth(data, maxTOMLDepth); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var top map[string]any
	if _, err := toml.Decode(string(data), &top); err != nil {
		return nil, fmt.Errorf("%s is not a TOML file agt can read (%s); want [mcp_servers.NAME] tables, as in Codex's config.toml", path, tomlErrorText(err))
	}
	raw, found := top["mcp_servers"]
	if !found {
		return nil, fmt.Errorf("%s has no [mcp_servers.NAME] tables (Codex's config.toml)", path)
	}
	tables, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: mcp_servers must be a table of servers ([mcp_servers.NAME])", path)
	}
	if len(tables) > maxImportServers {
		return nil, fmt.Errorf("%s lists %d servers; the limit is %d", path, len(tables), maxImportServers)
	}
	servers := make(map[string]json.RawMessage, len(tables))
	notes := map[string][]string{}
	for name, v := range tables {
		fields, ok := v.(map[string]any)
		if !ok {
			servers[name] = json.RawMessage(`null`) // reported as not an object
			continue
		}
		entry, n := codexEntry(fields)
		raw, err := json.Marshal(entry)
		if err != nil {
			raw = json.RawMessage(`null`)
		}
		servers[name], notes[name] = raw, n
	}
	return translateAll(path, servers, notes, category)
}

// codexEntry maps a Codex server table to the fields of the mcpServers
// format that translateServer reads, with notes on what was changed or left
// out. Fields it does not know stay, so that translateServer reports them.
func codexEntry(fields map[string]any) (map[string]any, []string) {
	out := make(map[string]any, len(fields))
	var notes []string
	for k, v := range fields {
		out[k] = v
	}
	for _, t := range []struct{ sec, ms string }{{"startup_timeout_sec", "startup_timeout_ms"}, {"tool_timeout_sec", "tool_timeout_ms"}} {
		v, ok := out[t.sec]
		if !ok {
			continue
		}
		delete(out, t.sec)
		switch n := v.(type) {
		case int64:
			if n >= 0 && n <= math.MaxInt64/1000 {
				out[t.ms] = n * 1000
				continue
			}
		case float64:
			if n >= 0 && n*1000 <= math.MaxInt64/2 {
				out[t.ms] = int64(math.Round(n * 1000))
				continue
			}
		}
		out[t.ms] = "not a number of seconds" // reported by translateServer as a wrong type
	}
	if _, remote := out["url"]; remote {
		if _, typed := out["type"]; !typed {
			out["type"] = "http" // Codex speaks streamable HTTP to a url
		}
	}
	if h, ok := out["http_headers"]; ok {
		delete(out, "http_headers")
		out["headers"] = h
	}
	// Variables Codex reads when it starts or reaches the server become
	// ${env:NAME} references, which agt reads at the same moment.
	headers, _ := out["headers"].(map[string]any)
	setHeader := func(k, v string) {
		if headers == nil {
			headers = map[string]any{}
			out["headers"] = headers
		}
		if _, dup := headers[k]; dup {
			notes = append(notes, fmt.Sprintf("header %s is given twice; the one from a variable is kept", clip(k)))
		}
		headers[k] = v
	}
	if v, ok := out["bearer_token_env_var"]; ok {
		delete(out, "bearer_token_env_var")
		if name, _ := v.(string); shellVarName(name) {
			setHeader("Authorization", "Bearer ${env:"+name+"}")
		} else {
			notes = append(notes, "bearer_token_env_var left out: it is not a variable name")
		}
	}
	if v, ok := out["env_http_headers"]; ok {
		delete(out, "env_http_headers")
		m, _ := v.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if name, _ := m[k].(string); shellVarName(name) {
				setHeader(k, "${env:"+name+"}")
			} else {
				notes = append(notes, fmt.Sprintf("env_http_headers %s left out: its value is not a variable name", clip(k)))
			}
		}
		if m == nil {
			notes = append(notes, "env_http_headers left out: it is not a table")
		}
	}
	if v, ok := out["env_vars"]; ok {
		delete(out, "env_vars")
		env, _ := out["env"].(map[string]any)
		var inherited []string
		items, isList := v.([]any)
		for _, it := range items {
			name, _ := it.(string)
			switch {
			case !shellVarName(name):
				notes = append(notes, "an env_vars entry left out: it is not a variable name")
			case inheritedByDefault(name):
				inherited = append(inherited, name)
			default:
				if env == nil {
					env = map[string]any{}
					out["env"] = env
				}
				if _, set := env[name]; !set {
					env[name] = "${env:" + name + "}"
				}
			}
		}
		if !isList {
			notes = append(notes, "env_vars left out: it is not an array")
		}
		if len(inherited) > 0 {
			notes = append(notes, fmt.Sprintf("env_vars %s: every server inherits them already", strings.Join(inherited, ", ")))
		}
	}
	if v, ok := out["enabled"]; ok {
		delete(out, "enabled")
		if on, isBool := v.(bool); isBool && !on {
			notes = append(notes, "it is disabled in the file (enabled = false); it is registered all the same: an agent uses it only once it is mounted")
		}
	}
	return out, notes
}

// inheritedByDefault reports whether a stdio server inherits the host
// variable name without being told (resource.DefaultInheritEnv).
func inheritedByDefault(name string) bool {
	for _, p := range resource.DefaultInheritEnv() {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

// tomlErrorText describes a TOML error by its line, never by the text.
func tomlErrorText(err error) string {
	if pe, ok := err.(toml.ParseError); ok {
		return fmt.Sprintf("syntax error on line %d", pe.Position.Line)
	}
	return "not valid TOML"
}

// checkTOMLDepth refuses TOML whose arrays and inline tables nest deeper
// than max, outside strings and comments. It reads each byte once.
func checkTOMLDepth(data []byte, max int) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch c {
		case '\n':
			line++
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i-- // the newline is counted by the loop
		case '"', '\'':
			end, lines := skipTOMLString(data, i)
			i, line = end, line+lines
		case '[', '{':
			depth++
			if depth > max {
				return fmt.Errorf("arrays and inline tables nest more than %d deep on line %d", max, line)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// skipTOMLString returns the index of the last byte of the string starting
// at data[i] (basic "..." with escapes, literal '...', or their """ and ”'
// multi-line forms) and the newlines it holds. An unterminated string runs
// to the end; the parser reports it.
func skipTOMLString(data []byte, i int) (end, lines int) {
	q := data[i]
	delim := []byte{q}
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		delim = []byte{q, q, q}
	}
	j := i + len(delim)
	for j < len(data) {
		switch {
		case data[j] == '\\' && q == '"':
			if j+1 < len(data) && data[j+1] == '\n' {
				lines++
			}
			j += 2
			continue
		case data[j] == '\n':
			lines++
		case data[j] == q && strings.HasPrefix(string(data[j:min(j+len(delim), len(data))]), string(delim)):
			// A multi-line string may end with up to two more quotes.
			end := j + len(delim) - 1
			for len(delim) == 3 && end+1 < len(data) && data[end+1] == q && end+1 < j+5 {
				end++
			}
			return end, lines
		}
		j++
	}
	return len(data) - 1, lines
}
