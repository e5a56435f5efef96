package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agtsdk/agt/resource"
)

// Bounds on an import file.
const (
	maxImportFile    = 4 << 20
	maxImportServers = 1000
)

// importEntry is one server of an import file, translated to agt's document,
// with what was changed on the way and why it cannot be imported, if so.
type importEntry struct {
	Key    string             `json:"key"`            // the name in the file
	Name   string             `json:"name,omitempty"` // the name inside mcpServers
	Ref    resource.Ref       `json:"reference,omitempty"`
	Server resource.MCPServer `json:"server"`
	Notes  []string           `json:"notes,omitempty"`
	Err    string             `json:"error,omitempty"`
}

// Fields of other hosts' formats that agt maps; everything else is reported
// as left out.
var importFields = map[string]bool{
	"type": true, "transport": true, "command": true, "args": true, "env": true, "cwd": true,
	"url": true, "serverUrl": true, "httpUrl": true, "headers": true, "description": true,
	"startup_timeout_ms": true, "tool_timeout_ms": true, "enabled_tools": true, "disabled_tools": true,
}

// parseImportFile reads an mcpServers file. path is the file's absolute
// path; it decides the cwd of servers that have none.
func parseImportFile(path string, data []byte, category string) ([]importEntry, error) {
	if len(data) > maxImportFile {
		return nil, fmt.Errorf("%s is %d bytes; an import file may have at most %d", path, len(data), maxImportFile)
	}
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return parseCodexFile(path, data, category)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, fmt.Errorf("%s is not a JSON object (%s); want {\"mcpServers\": {NAME: {...}}}", path, jsonErrorText(err))
	}
	raw, where := top["mcpServers"], "mcpServers"
	if raw == nil {
		raw, where = top["servers"], "servers"
	}
	if raw == nil {
		if m, ok := top["mcp"]; ok {
			var inner map[string]json.RawMessage
			if json.Unmarshal(m, &inner) == nil {
				raw, where = inner["servers"], "mcp.servers"
			}
		}
	}
	if raw == nil {
		return nil, fmt.Errorf("%s has no \"mcpServers\" (Claude, Cursor, .mcp.json) or \"servers\" (VS Code) object", path)
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return nil, fmt.Errorf("%s: %q must be an object of servers (%s)", path, where, jsonErrorText(err))
	}
	return translateAll(path, servers, nil, category)
}

// translateAll translates the servers of an import file, in key order;
// notes holds what the file's own reader noted for each key.
func translateAll(path string, servers map[string]json.RawMessage, notes map[string][]string, category string) ([]importEntry, error) {
	if len(servers) > maxImportServers {
		return nil, fmt.Errorf("%s lists %d servers; the limit is %d", path, len(servers), maxImportServers)
	}
	keys := make([]string, 0, len(servers))
	for k := range servers {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	workspace := projectDir(path)
	entries := make([]importEntry, 0, len(keys))
	seen := map[resource.Ref]string{}
	for _, k := range keys {
		e := translateServer(k, servers[k], path, workspace, category)
		e.Notes = append(notes[k], e.Notes...)
		if e.Err == "" {
			if other, dup := seen[e.Ref]; dup {
				e.Err = fmt.Sprintf("its reference %s is also the one of %q in the same file: rename one of them", e.Ref, other)
			}
			seen[e.Ref] = k
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// projectDir is the directory a file's servers belong to: the file's own
// directory, or its parent for the per-project .vscode/ and .cursor/ files.
func projectDir(path string) string {
	dir := filepath.Dir(path)
	switch filepath.Base(dir) {
	case ".vscode", ".cursor", ".codex":
		return filepath.Dir(dir)
	}
	return dir
}

func translateServer(key string, raw json.RawMessage, path, workspace, category string) importEntry {
	e := importEntry{Key: key}
	ref, renamed, err := refForKey(key, category)
	if err != nil {
		e.Err = err.Error()
		return e
	}
	e.Ref = ref
	if renamed {
		e.Notes = append(e.Notes, fmt.Sprintf("its reference is %s (references are lowercase letters, digits, '.', '_' and '-')", ref))
	}

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		e.Err = fmt.Sprintf("its entry is not a JSON object (%s)", jsonErrorText(err))
		return e
	}
	var ignored []string
	for f := range fields {
		if !importFields[f] {
			ignored = append(ignored, f)
		}
	}
	sort.Strings(ignored)
	if len(ignored) > 0 {
		e.Notes = append(e.Notes, "left out fields agt does not use: "+strings.Join(ignored, ", "))
	}

	var in struct {
		Type             string            `json:"type"`
		Transport        string            `json:"transport"`
		Command          string            `json:"command"`
		Args             []string          `json:"args"`
		Env              map[string]string `json:"env"`
		Cwd              string            `json:"cwd"`
		URL              string            `json:"url"`
		ServerURL        string            `json:"serverUrl"`
		HTTPURL          string            `json:"httpUrl"`
		Headers          map[string]string `json:"headers"`
		Description      string            `json:"description"`
		StartupTimeoutMS int64             `json:"startup_timeout_ms"`
		ToolTimeoutMS    int64             `json:"tool_timeout_ms"`
		EnabledTools     []string          `json:"enabled_tools"`
		DisabledTools    []string          `json:"disabled_tools"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&in); err != nil {
		e.Err = fmt.Sprintf("its entry has a field of the wrong type (%s)", jsonErrorText(err))
		return e
	}
	srv := resource.MCPServer{
		Command: in.Command, Args: in.Args, Env: in.Env, Cwd: in.Cwd,
		URL: firstNonEmpty(in.URL, in.ServerURL, in.HTTPURL), Headers: in.Headers,
		Description: in.Description, StartupTimeoutMS: in.StartupTimeoutMS, ToolTimeoutMS: in.ToolTimeoutMS,
		EnabledTools: in.EnabledTools, DisabledTools: in.DisabledTools,
	}
	switch t := strings.ToLower(firstNonEmpty(in.Type, in.Transport)); t {
	case "":
	case "stdio", "http", "sse":
		srv.Type = t
	case "streamable-http", "streamablehttp", "streamable_http":
		srv.Type = resource.TransportHTTP
	default:
		e.Err = fmt.Sprintf("its type %q is not one agt knows: write stdio, http or sse", clip(t))
		return e
	}
	if in.HTTPURL != "" && srv.Type == "" {
		srv.Type = resource.TransportHTTP
	}

	if names := envReferences(&srv); len(names) > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("%s written as ${env:NAME}: read from agt's environment when the server starts, for names listed in $%s (defaults after :- dropped)", strings.Join(names, ", "), secretEnvVar))
	}
	if srv.Transport() == resource.TransportStdio {
		if msg := placeCwd(&srv, path, workspace); msg != "" {
			e.Notes = append(e.Notes, msg)
		}
		if err := checkImportCommand(srv); err != nil {
			e.Err = err.Error()
			return e
		}
	}
	e.Name = key
	if !validServerName(key) {
		e.Name = ref.Name()
		e.Notes = append(e.Notes, fmt.Sprintf("its name inside mcpServers is %s (server names are letters, digits, '.', '_' and '-')", e.Name))
	}
	// The write rules, checked here too, so that --dry-run promises only
	// what the import does.
	doc, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{e.Name: srv}})
	if err == nil {
		_, _, err = resource.ValidateMCP(doc)
	}
	if err != nil {
		e.Err = strings.TrimPrefix(err.Error(), "resource: ")
		return e
	}
	e.Server = srv
	return e
}

// envReferences rewrites the environment variables other hosts expand,
// ${VAR} and ${VAR:-default}, as agt's ${env:VAR} references in args, env
// values and header values, and returns the names rewritten (each once,
// sorted). A default is dropped: agt has no fallback value.
func envReferences(srv *resource.MCPServer) []string {
	var names []string
	rewrite := func(s string) string {
		var b strings.Builder
		for {
			i := strings.Index(s, "${")
			if i < 0 {
				b.WriteString(s)
				return b.String()
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 || i > 0 && s[i-1] == '$' {
				b.WriteString(s[:i+2])
				s = s[i+2:]
				continue
			}
			body := s[i+2 : i+j]
			name, _, _ := strings.Cut(body, ":-")
			if !shellVarName(name) || name != body && !strings.Contains(body, ":-") {
				b.WriteString(s[:i+j+1])
				s = s[i+j+1:]
				continue
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			b.WriteString(s[:i] + "${env:" + name + "}")
			s = s[i+j+1:]
		}
	}
	for i, a := range srv.Args {
		srv.Args[i] = rewrite(a)
	}
	for _, m := range []map[string]string{srv.Env, srv.Headers} {
		for k, v := range m {
			m[k] = rewrite(v)
		}
	}
	slices.Sort(names)
	return names
}

// shellVarName reports whether s is a variable name as shells write it,
// and not one of agt's own placeholders.
func shellVarName(s string) bool {
	if s == "" || s == "cwd" || s == "workspace" || s == "workspaceFolder" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validServerName reports whether name may be a key of mcpServers as
// stored: 1 to 64 letters, digits, '.', '_' and '-'.
func validServerName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// placeCwd gives a stdio server an absolute cwd: the file's project
// directory when it has none, resolved against it when it is relative.
func placeCwd(srv *resource.MCPServer, path, workspace string) string {
	var note string
	switch {
	case srv.Cwd == "" || srv.Cwd == "${workspaceFolder}":
		srv.Cwd = workspace
		note = fmt.Sprintf("no cwd in %s: it runs in %s, the directory of that file", filepath.Base(path), workspace)
		if filepath.Dir(path) != workspace {
			note = fmt.Sprintf("no cwd in %s: it runs in %s, the project that file belongs to", filepath.Base(path), workspace)
		}
	case !filepath.IsAbs(srv.Cwd) && !strings.HasPrefix(srv.Cwd, "~") && !strings.Contains(srv.Cwd, "${"):
		srv.Cwd = filepath.Join(workspace, srv.Cwd)
		note = fmt.Sprintf("relative cwd resolved against %s: %s", workspace, srv.Cwd)
	}
	// VS Code's ${workspaceFolder} is agt's ${workspace} when the server runs
	// in the project directory.
	if srv.Cwd == workspace {
		replaced := false
		for i, a := range srv.Args {
			if strings.Contains(a, "${workspaceFolder}") {
				srv.Args[i] = strings.ReplaceAll(a, "${workspaceFolder}", "${workspace}")
				replaced = true
			}
		}
		if replaced {
			note = strings.TrimPrefix(note+"; ${workspaceFolder} in args written as ${workspace}", "; ")
		}
	}
	return note
}

// checkImportCommand refuses commands that depend on the directory agt runs
// in, with the absolute path to write instead.
func checkImportCommand(srv resource.MCPServer) error {
	c := srv.Command
	switch {
	case c == "":
		return errors.New("it has neither command nor url")
	case strings.HasPrefix(c, "~"):
		return fmt.Errorf("its command %s starts with ~, which agt does not expand: write the absolute path", c)
	case !relativeCommand(c):
		return nil
	default:
		fix := c
		if filepath.IsAbs(srv.Cwd) {
			fix = filepath.Join(srv.Cwd, c)
		}
		return fmt.Errorf("its command %s is a relative path; agt runs a bare command name from PATH or an absolute path: write %q (resolved against its cwd), and check that it is the file you mean", c, fix)
	}
}

// refForKey turns a server's key into a reference, lowercasing it and
// replacing every other character, '_' and '.' included, with '-': a
// reference of [a-z0-9-] keeps readable tool aliases (mcp__my-server__x),
// where "my_server" would carry a hash.
func refForKey(key, category string) (resource.Ref, bool, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 64 {
		name = name[:64]
	}
	full := name
	if category != "" {
		full = category + "/" + name
	}
	ref, err := resource.ParseRef(full)
	if err != nil {
		return "", false, fmt.Errorf("no valid reference can be made of its name: %s", strings.TrimPrefix(err.Error(), "resource: "))
	}
	return ref, name != key, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
