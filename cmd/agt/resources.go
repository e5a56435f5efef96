package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/resource"
)

// The commands that only read and write resources, through the one
// resource service (as the framework tools do), as the direct caller.

func mcpCreate(ctx context.Context, e *env, fs *flag.FlagSet, sf *serverFlags, refArg string) error {
	ref, rename, err := refArgForNew("mcp create", refArg)
	if err != nil {
		return err
	}
	data, err := documentFromFlags(fs, sf, ref)
	if err != nil {
		return err
	}
	if rename != "" {
		fmt.Fprintln(e.err, rename)
	}
	if _, srv, err := resource.DecodeMCP(data); err == nil {
		if n := literalSecretNote(srv); n != "" {
			fmt.Fprintln(e.err, "note: "+n)
		}
	}
	if given(fs, "cwd") && !filepath.IsAbs(sf.cwd) {
		abs, _ := filepath.Abs(sf.cwd)
		fmt.Fprintf(e.err, "note: --cwd made absolute: %s\n", abs)
	}
	cwd, _ := filepath.Abs(sf.cwd)
	return registerMCP(ctx, e, ref, data, sf.command, cwd)
}

// mcpAdd is the short form of create: agt mcp add REF [FLAGS] -- CMD
// [ARGS...], or REF --transport http URL.
func mcpAdd(ctx context.Context, e *env, fs *flag.FlagSet, af *addFlags, pos []string) error {
	ref, rename, err := refArgForNew("mcp add", pos[0])
	if err != nil {
		return err
	}
	srv, notes, err := af.server(fs, pos)
	if err != nil {
		return err
	}
	name := af.name
	if name == "" {
		name = ref.Name()
	}
	data, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{name: srv}})
	if err != nil {
		return err
	}
	if n := literalSecretNote(srv); n != "" {
		notes = append(notes, "note: "+n)
	}
	for _, n := range append([]string{rename}, notes...) {
		if n != "" {
			fmt.Fprintln(e.err, n)
		}
	}
	return registerMCP(ctx, e, ref, data, srv.Command, srv.Cwd)
}

// mcpAddJSON registers the server whose entry JSON holds (claude mcp
// add-json), read as import reads one.
func mcpAddJSON(ctx context.Context, e *env, fs *flag.FlagSet, cwd, refArg, jsonText string) error {
	const cmd = "mcp add-json"
	ref, rename, err := refArgForNew(cmd, refArg)
	if err != nil {
		return err
	}
	text, err := e.callArguments(cmd, jsonText)
	if err != nil {
		return err
	}
	raw, err := jsonArg(cmd, "JSON", string(stripJSONC([]byte(text))))
	if err != nil {
		return err
	}
	if !bareServer(raw) {
		return usagef(cmd, "JSON must be one server's entry, with \"command\" or \"url\"; a whole {\"mcpServers\": ...} document goes to 'agt mcp create REF --data JSON' or 'agt mcp import FILE'")
	}
	if cwd == "" {
		cwd = "."
	}
	workspace, err := filepath.Abs(cwd)
	if err != nil {
		return fmt.Errorf("--cwd: %w", err)
	}
	category := ""
	if i := strings.IndexByte(string(ref), '/'); i > 0 {
		category = string(ref[:i])
	}
	en := translateServer(ref.Name(), raw, "", workspace, category)
	if given(fs, "scope") {
		fmt.Fprintln(e.err, "note: --scope is Claude Code's; agt keeps every registration in one store (--db)")
	}
	if rename != "" {
		fmt.Fprintln(e.err, rename)
	}
	for _, n := range en.Notes {
		fmt.Fprintf(e.err, "note: %s\n", n)
	}
	if en.Err != "" {
		return fmt.Errorf("mcp %s not registered: %s", ref, en.Err)
	}
	data, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{en.Name: en.Server}})
	if err != nil {
		return err
	}
	return registerMCP(ctx, e, ref, data, en.Server.Command, en.Server.Cwd)
}

// registerMCP creates the MCP resource ref and runs the static checks on
// it. command and cwd are the server's, for the fix of a refused command.
func registerMCP(ctx context.Context, e *env, ref resource.Ref, data json.RawMessage, command, cwd string) error {
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	res, err := h.Resources().Write(ctx, resource.Direct(), resource.WriteRequest{
		Kind: resource.KindMCP, Ref: ref, Create: true, Data: data,
	})
	if err != nil {
		return withCommandFix(aboutCreate(err, resource.KindMCP, ref), command, cwd)
	}
	reportWrite(e, "registered", res)
	if !warnStatic(ctx, e, h.Resources(), ref) {
		fmt.Fprintf(e.err, "static checks passed; next: 'agt mcp probe %s' starts it\n", ref)
	}
	return nil
}

// warnStatic runs the static test (it starts nothing) on a registration
// just written and prints its errors as warnings: a missing cwd or command
// is better heard now than at the first probe. It reports whether it
// warned.
func warnStatic(ctx context.Context, e *env, svc *resource.Service, ref resource.Ref) bool {
	rep, err := svc.Test(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: ref})
	if err != nil || rep.OK {
		return false
	}
	for _, f := range rep.Findings {
		if f.Severity == findcode.Error {
			fmt.Fprintf(e.err, "warning: %s\n", f)
		}
	}
	fmt.Fprintf(e.err, "next: fix it with 'agt mcp update %s', then 'agt mcp test %s'\n", ref, ref)
	return true
}

func mcpUpdate(ctx context.Context, e *env, fs *flag.FlagSet, sf *serverFlags, refArg string) error {
	const cmd = "mcp update"
	ref, err := parseRefArg(cmd, refArg)
	if err != nil {
		return err
	}
	if given(fs, "data") && anyServerFlag(fs) {
		return usagef(cmd, "--data gives the whole document; do not combine it with the server flags")
	}
	if !given(fs, "data") && !anyServerFlag(fs) {
		return usagef(cmd, "nothing to change: give the flags to change (--command, --cwd, --arg, --url, ...) or --data")
	}
	if sf.expectedRevision < 0 {
		return usagef(cmd, "--expected-revision must be a revision you read (1 or more)")
	}
	if given(fs, "cwd") && !filepath.IsAbs(sf.cwd) {
		abs, _ := filepath.Abs(sf.cwd)
		fmt.Fprintf(e.err, "note: --cwd made absolute: %s\n", abs)
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	req := resource.WriteRequest{Kind: resource.KindMCP, Ref: ref, ExpectedRevision: sf.expectedRevision}
	var command, cwd string // of the server as written, for the fix of a refused command
	if given(fs, "data") {
		if req.Data, err = jsonArg(cmd, "--data", sf.data); err != nil {
			return err
		}
	} else {
		cur, err := h.Resources().Read(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: ref})
		if err != nil {
			return e.withRefSuggestion(ctx, resource.KindMCP, ref, err)
		}
		name, srv, err := resource.DecodeMCP(cur.Data)
		if err != nil {
			return fmt.Errorf("the stored document cannot be edited flag by flag (%v): replace it with --data", err)
		}
		if err := sf.apply(fs, &srv); err != nil {
			return usagef(cmd, "%s", err)
		}
		if sf.name != "" {
			name = sf.name
		}
		if req.Data, err = json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{name: srv}}); err != nil {
			return err
		}
		command, cwd = srv.Command, srv.Cwd
		if req.ExpectedRevision == 0 {
			// Compare-and-set on what was just read: a concurrent writer
			// makes this fail instead of being overwritten.
			req.ExpectedRevision = cur.Revision
		}
	}
	res, err := h.Resources().Write(ctx, resource.Direct(), req)
	if err != nil {
		return withCommandFix(about(err, resource.KindMCP, ref), command, cwd)
	}
	reportWrite(e, "updated", res)
	warnStatic(ctx, e, h.Resources(), ref)
	return nil
}

// withCommandFix adds, to the refusal of a relative command,
// the absolute path the operator most likely means, as the flag to give.
func withCommandFix(err error, command, cwd string) error {
	if !errors.Is(err, resource.ErrInvalid) || !relativeCommand(command) || strings.HasPrefix(command, "~") || !filepath.IsAbs(cwd) {
		return err
	}
	return fmt.Errorf("%w\nnext: --command %s (--cwd joined with it), if that is the program you mean", err, filepath.Join(cwd, command))
}

// relativeCommand is the library's rule for a command it refuses as a
// relative path (a '/' or '\' in a path that is not absolute), for the
// fixes the CLI offers; TestRelativeCommandRule keeps the two in step.
func relativeCommand(c string) bool { return !filepath.IsAbs(c) && strings.ContainsAny(c, `/\`) }

// reportWrite prints what a write did, its warnings and no-ops.
func reportWrite(e *env, verb string, res resource.WriteResult) {
	r := res.Resource
	if res.Changed {
		fmt.Fprintf(e.out, "%s %s %s (revision %d)\n", verb, r.Kind, r.Ref, r.Revision)
	} else {
		fmt.Fprintf(e.out, "%s %s unchanged (revision %d)\n", r.Kind, r.Ref, r.Revision)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.err, "warning: %s\n", w)
	}
	for _, n := range res.Noops {
		fmt.Fprintf(e.err, "no change: %s\n", n)
	}
}

func showResource(ctx context.Context, e *env, kind resource.Kind, refArg string, asJSON bool) error {
	ref, err := parseRefArg(string(kind)+" get", refArg)
	if err != nil {
		return err
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	res, err := h.Resources().Read(ctx, resource.Direct(), resource.Key{Kind: kind, Ref: ref})
	if err != nil {
		return e.withRefSuggestion(ctx, kind, ref, err)
	}
	if asJSON {
		return writeJSON(e.out, res)
	}
	t := newTable(e.out)
	fmt.Fprintf(t, "reference\t%s\n", res.Ref)
	fmt.Fprintf(t, "revision\t%d\n", res.Revision)
	fmt.Fprintf(t, "updated\t%s\n", res.UpdatedAt.Local().Format(time.DateTime))
	if kind == resource.KindMCP {
		writeServerFields(t, res.Data)
	} else {
		writeAgentFields(t, res.Data)
	}
	return t.Flush()
}

// writeServerFields prints an MCP document's fields; env values and header
// values are not shown (they are often secrets): --json shows them.
func writeServerFields(t interface{ Write([]byte) (int, error) }, data json.RawMessage) {
	name, srv, err := resource.DecodeMCP(data)
	if err != nil {
		fmt.Fprintf(t, "problem\t%v\n", err)
		return
	}
	fmt.Fprintf(t, "server\t%s\n", name)
	fmt.Fprintf(t, "transport\t%s\n", srv.Transport())
	if srv.Transport() == resource.TransportStdio {
		fmt.Fprintf(t, "command\t%s\n", srv.Command)
		if len(srv.Args) > 0 {
			masked := resourcefn.MaskArgs(srv.Args)
			shown := strings.Join(quoteArgs(masked), " ")
			if !slices.Equal(masked, srv.Args) { // MaskArgs changes only what it hides
				shown += " (credentials hidden; --json shows them)"
			}
			fmt.Fprintf(t, "args\t%s\n", shown)
		}
		cwd := srv.Cwd
		if !filepath.IsAbs(cwd) {
			cwd = fmt.Sprintf("%q (not absolute: set it with agt mcp update --cwd DIR before starting it)", cwd)
		}
		fmt.Fprintf(t, "cwd\t%s\n", cwd)
		if len(srv.Env) > 0 {
			fmt.Fprintf(t, "env\t%s (values hidden; --json shows them)\n", strings.Join(slices.Sorted(maps.Keys(srv.Env)), ", "))
		}
	} else {
		shown, hidden := displayURL(srv.URL)
		if hidden {
			shown += " (credentials hidden; --json shows them)"
		}
		fmt.Fprintf(t, "url\t%s\n", shown)
		if len(srv.Headers) > 0 {
			fmt.Fprintf(t, "headers\t%s (values hidden; --json shows them)\n", strings.Join(slices.Sorted(maps.Keys(srv.Headers)), ", "))
		}
	}
	if srv.StartupTimeoutMS > 0 {
		fmt.Fprintf(t, "startup timeout\t%s\n", time.Duration(srv.StartupTimeoutMS)*time.Millisecond)
	}
	if srv.ToolTimeoutMS > 0 {
		fmt.Fprintf(t, "tool timeout\t%s\n", time.Duration(srv.ToolTimeoutMS)*time.Millisecond)
	}
	if srv.Description != "" {
		fmt.Fprintf(t, "description\t%s\n", oneLine(srv.Description, 100))
	}
	fmt.Fprintf(t, "tools\t%s\n", oneLine(toolSelection(srv), 200))
	if srv.Shared {
		fmt.Fprintf(t, "shared\tyes: the Runs of one host share one connection (calls of different users meet in one process)\n")
	}
	if srv.ProtocolVersion != "" {
		fmt.Fprintf(t, "protocol\tpinned to %s (protocol_version; --protocol-version \"\" negotiates)\n", shown(srv.ProtocolVersion, maxCellWidth))
	}
}

// toolSelection describes enabled_tools and disabled_tools in one line:
// "all", "none", "only a, b*", "all except c".
func toolSelection(srv resource.MCPServer) string {
	var s string
	switch {
	case srv.EnabledTools == nil:
		s = "all"
	case len(srv.EnabledTools) == 0:
		return "none (enabled_tools is empty)"
	default:
		s = "only " + strings.Join(srv.EnabledTools, ", ")
	}
	if len(srv.DisabledTools) > 0 {
		s += " except " + strings.Join(srv.DisabledTools, ", ")
	}
	return s
}

func writeAgentFields(t interface{ Write([]byte) (int, error) }, data json.RawMessage) {
	doc, err := resource.DecodeAgent(data)
	if err != nil {
		fmt.Fprintf(t, "problem\t%v\n", err)
		return
	}
	fmt.Fprintf(t, "enabled\t%s\n", yesNo(doc.IsEnabled()))
	fmt.Fprintf(t, "manager\t%s\n", yesNo(doc.Manager))
	fmt.Fprintf(t, "capabilities\t%s\n", orNone(doc.Capabilities))
	mcps := make([]string, len(doc.MCPs))
	for i, m := range doc.MCPs {
		mcps[i] = string(m)
	}
	fmt.Fprintf(t, "mcps\t%s\n", orNone(mcps))
	if len(doc.Extra) > 0 {
		fmt.Fprintf(t, "other fields\t%s\n", strings.Join(slices.Sorted(maps.Keys(doc.Extra)), ", "))
	}
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "(none)"
	}
	return strings.Join(items, ", ")
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return out
}

func listResources(ctx context.Context, e *env, kind resource.Kind, category string) ([]resource.Resource, error) {
	h, err := e.host(ctx)
	if err != nil {
		return nil, err
	}
	list, err := h.Resources().List(ctx, resource.Direct(), kind, category)
	if list == nil {
		list = []resource.Resource{}
	}
	return list, err
}

func mcpList(ctx context.Context, e *env, category string, asJSON bool) error {
	list, err := listResources(ctx, e, resource.KindMCP, category)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.err, "no MCP servers registered; add one with 'agt mcp create' or 'agt mcp import'")
		return nil
	}
	now := time.Now()
	t := newTable(e.out)
	fmt.Fprintln(t, "REFERENCE\tTRANSPORT\tTARGET\tTOOLS\tREVISION\tUPDATED")
	for _, r := range list {
		transport, target, tools := "?", "(unreadable document)", "?"
		if _, srv, err := resource.DecodeMCP(r.Data); err == nil {
			transport, target, tools = srv.Transport(), oneLine(serverTarget(srv), 60), oneLine(toolSelection(srv), 40)
			if srv.Shared {
				transport += " (shared)" // an operator sees at a glance where users meet
			}
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%d\t%s\n", r.Ref, transport, target, tools, r.Revision, since(now, r.UpdatedAt))
	}
	return t.Flush()
}

// serverTarget is what a server runs or contacts: its command line, or its
// URL without credentials.
func serverTarget(srv resource.MCPServer) string {
	if srv.Transport() == resource.TransportStdio {
		return strings.Join(append([]string{srv.Command}, quoteArgs(resourcefn.MaskArgs(srv.Args))...), " ")
	}
	shown, _ := displayURL(srv.URL)
	return shown
}

// serverSummary describes a server in one line, without env or header
// values.
func serverSummary(srv resource.MCPServer) string {
	s := srv.Transport() + " " + serverTarget(srv)
	if srv.Cwd != "" {
		s += " (cwd " + srv.Cwd + ")"
	}
	if len(srv.Env) > 0 {
		s += ", env " + strings.Join(slices.Sorted(maps.Keys(srv.Env)), ", ")
	}
	if len(srv.Headers) > 0 {
		s += ", headers " + strings.Join(slices.Sorted(maps.Keys(srv.Headers)), ", ")
	}
	if srv.EnabledTools != nil || len(srv.DisabledTools) > 0 {
		s += ", tools " + toolSelection(srv)
	}
	if srv.Shared {
		s += ", shared"
	}
	return s
}

func agentList(ctx context.Context, e *env, category string, asJSON bool) error {
	list, err := listResources(ctx, e, resource.KindAgent, category)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.err, "no agents; create one with 'agt agent create AGENT'")
		return nil
	}
	t := newTable(e.out)
	fmt.Fprintln(t, "AGENT\tENABLED\tMANAGES\tMCPS\tREVISION")
	for _, r := range list {
		doc, err := resource.DecodeAgent(r.Data)
		if err != nil {
			fmt.Fprintf(t, "%s\t?\t?\t(unreadable document)\t%d\n", r.Ref, r.Revision)
			continue
		}
		mcps := make([]string, len(doc.MCPs))
		for i, m := range doc.MCPs {
			mcps[i] = string(m)
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%d\n", r.Ref, yesNo(doc.IsEnabled()), yesNo(doc.CanManage()), oneLine(orNone(mcps), 60), r.Revision)
	}
	return t.Flush()
}

func deleteResource(ctx context.Context, e *env, kind resource.Kind, refArg string, expected int64) error {
	ref, err := parseRefArg(string(kind)+" delete", refArg)
	if err != nil {
		return err
	}
	if expected < 0 {
		return usagef(string(kind)+" delete", "--expected-revision must be a revision you read (1 or more)")
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	if err := h.Resources().Delete(ctx, resource.Direct(), resource.Key{Kind: kind, Ref: ref}, expected); err != nil {
		return e.withRefSuggestion(ctx, kind, ref, err)
	}
	fmt.Fprintf(e.out, "deleted %s %s\n", kind, ref)
	return nil
}

// withMountSuggestion adds, to the refusal of a mount that names no
// registered MCP server, the registered reference nearest to each such
// name.
func withMountSuggestion(ctx context.Context, e *env, err error, ch agentChange) error {
	if !errors.Is(err, resource.ErrNotFound) || e.h == nil {
		return err
	}
	asked := slices.Clone(ch.add)
	if mcps, ok := ch.data["mcps"].([]string); ok {
		asked = append(asked, mcps...)
	}
	list, lerr := e.h.Resources().List(ctx, resource.Direct(), resource.KindMCP, "")
	if lerr != nil {
		return err
	}
	refs := make([]string, len(list))
	for i, r := range list {
		refs[i] = string(r.Ref)
	}
	var near []string
	for _, a := range asked {
		if slices.Contains(refs, a) {
			continue
		}
		if n := didYouMean(a, refs); n != "" {
			near = append(near, fmt.Sprintf("%s for %s", n, a))
		}
	}
	if len(near) == 0 {
		return err
	}
	return fmt.Errorf("%w (did you mean %s?)", err, strings.Join(near, ", "))
}

// mcpDelete deletes an MCP registration unless agents mount it (then it
// names them), or --force.
func mcpDelete(ctx context.Context, e *env, refArg string, expected int64, force bool) error {
	const cmd = "mcp delete"
	ref, err := parseRefArg(cmd, refArg)
	if err != nil {
		return err
	}
	if expected < 0 {
		return usagef(cmd, "--expected-revision must be a revision you read (1 or more)")
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	key := resource.Key{Kind: resource.KindMCP, Ref: ref}
	if _, err := h.Resources().Read(ctx, resource.Direct(), key); err != nil {
		return e.withRefSuggestion(ctx, resource.KindMCP, ref, err)
	}
	users, err := mountedBy(ctx, h.Resources(), ref)
	if err != nil {
		return err
	}
	if len(users) > 0 && !force {
		return fmt.Errorf("mcp %s is mounted by %s; nothing was deleted\nnext: unmount it first ('agt agent update %s --remove-mcp %s'), or delete it anyway with --force (%s then report the mount as missing)",
			ref, agentsText(users), users[0], ref, pronoun(len(users)))
	}
	if err := h.Resources().Delete(ctx, resource.Direct(), key, expected); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "deleted mcp %s\n", ref)
	if len(users) > 0 {
		fmt.Fprintf(e.err, "warning: still mounted by %s, which now report it as missing; unmount it with 'agt agent update AGENT --remove-mcp %s'\n",
			agentsText(users), ref)
	}
	return nil
}

// mountedBy lists the agents whose mcps name ref, sorted. An agent whose
// document cannot be read is left out.
func mountedBy(ctx context.Context, svc *resource.Service, ref resource.Ref) ([]string, error) {
	agents, err := svc.List(ctx, resource.Direct(), resource.KindAgent, "")
	if err != nil {
		return nil, err
	}
	var users []string
	for _, a := range agents {
		doc, err := resource.DecodeAgent(a.Data)
		if err != nil {
			continue
		}
		if slices.Contains(doc.MCPs, ref) {
			users = append(users, string(a.Ref))
		}
	}
	return users, nil
}

// plural is "1 agent", "2 agents".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// agentsText is "agent a" or "2 agents: a, b".
func agentsText(users []string) string {
	if len(users) == 1 {
		return "agent " + users[0]
	}
	return fmt.Sprintf("%d agents: %s", len(users), strings.Join(users, ", "))
}

func pronoun(n int) string {
	if n == 1 {
		return "it will"
	}
	return "they will"
}

func agentCreate(ctx context.Context, e *env, fs *flag.FlagSet, af *agentFlags, refArg string) error {
	ref, err := parseRefArg("agent create", refArg)
	if err != nil {
		return err
	}
	ch, err := af.createChange(ref)
	if err != nil {
		return err
	}
	return writeAgent(ctx, e, ref, ch, true, 0)
}

func agentUpdate(ctx context.Context, e *env, fs *flag.FlagSet, af *agentFlags, refArg string) error {
	ref, err := parseRefArg("agent update", refArg)
	if err != nil {
		return err
	}
	ch, err := af.updateChange()
	if err != nil {
		return err
	}
	if af.expectedRevision < 0 {
		return usagef("agent update", "--expected-revision must be a revision you read (1 or more)")
	}
	return writeAgent(ctx, e, ref, ch, false, af.expectedRevision)
}

func writeAgent(ctx context.Context, e *env, ref resource.Ref, ch agentChange, create bool, expected int64) error {
	req := resource.WriteRequest{Kind: resource.KindAgent, Ref: ref, Create: create, ExpectedRevision: expected}
	if len(ch.data) > 0 {
		data, err := json.Marshal(ch.data)
		if err != nil {
			return err
		}
		req.Data = data
	}
	if len(ch.add) > 0 {
		req.Add = map[string][]string{"mcps": ch.add}
	}
	if len(ch.remove) > 0 {
		req.Remove = map[string][]string{"mcps": ch.remove}
	}
	h, err := e.host(ctx)
	if err != nil {
		return err
	}
	res, err := h.Resources().Write(ctx, resource.Direct(), req)
	if err != nil {
		if !create && errors.Is(err, resource.ErrNotFound) {
			if _, rerr := h.Resources().Read(ctx, resource.Direct(), resource.Key{Kind: resource.KindAgent, Ref: ref}); errors.Is(rerr, resource.ErrNotFound) {
				return e.withRefSuggestion(ctx, resource.KindAgent, ref, err)
			}
		}
		if errors.Is(err, resource.ErrNotFound) {
			// The agent exists (or is being created): what is missing
			// is a mount, an MCP registration.
			return withMountSuggestion(ctx, e, about(err, resource.KindMCP, ""), ch)
		}
		if create {
			return aboutCreate(err, resource.KindAgent, ref)
		}
		return about(err, resource.KindAgent, ref)
	}
	verb := "updated"
	if create {
		verb = "created"
	}
	reportWrite(e, verb, res)
	if doc, err := resource.DecodeAgent(res.Resource.Data); err == nil {
		mcps := make([]string, len(doc.MCPs))
		for i, m := range doc.MCPs {
			mcps[i] = string(m)
		}
		fmt.Fprintf(e.out, "mcps: %s\n", orNone(mcps))
	}
	return nil
}

func mcpImport(ctx context.Context, e *env, file, category string, dryRun, update bool) error {
	const cmd = "mcp import"
	if category != "" {
		if _, err := resource.ParseRef(category + "/x"); err != nil || strings.Contains(category, "/") {
			return usagef(cmd, "--category must be one reference segment (lowercase letters, digits, '.', '_' and '-')")
		}
	}
	path, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	data, err := readBounded(path, maxImportFile)
	if err != nil {
		return err
	}
	entries, err := parseImportFile(path, data, category)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		fmt.Fprintf(e.err, "%s lists no servers\n", file)
		return nil
	}
	var svc *resource.Service
	if !dryRun {
		h, err := e.host(ctx)
		if err != nil {
			return err
		}
		svc = h.Resources()
	}
	var invalid, unwritten, same, differ int
	for _, en := range entries {
		label := en.Key
		if en.Ref != "" && string(en.Ref) != en.Key {
			label = fmt.Sprintf("%s (as %s)", en.Key, en.Ref)
		}
		for _, n := range en.Notes {
			fmt.Fprintf(e.err, "%s: note: %s\n", label, n)
		}
		if en.Err != "" {
			invalid++
			fmt.Fprintf(e.err, "%s: not imported: %s\n", label, en.Err)
			continue
		}
		if en.Warn != "" {
			fmt.Fprintf(e.err, "%s: warning: %s; 'agt mcp test %s' checks it again\n", label, en.Warn, en.Ref)
		}
		doc, err := json.Marshal(resource.MCPDocument{MCPServers: map[string]resource.MCPServer{en.Name: en.Server}})
		if err != nil {
			return err
		}
		if dryRun {
			// A summary, not the document: env and header values may be
			// secrets.
			fmt.Fprintf(e.out, "would register mcp %s: %s\n", en.Ref, serverSummary(en.Server))
			continue
		}
		res, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
			Kind: resource.KindMCP, Ref: en.Ref, Create: true, Data: doc,
		})
		if err == nil {
			fmt.Fprintf(e.out, "registered mcp %s (revision %d)\n", res.Resource.Ref, res.Resource.Revision)
			continue
		}
		if !errors.Is(err, resource.ErrExists) {
			unwritten++
			fmt.Fprintf(e.err, "%s: not imported: %s\n", label, explain(aboutCreate(err, resource.KindMCP, en.Ref)))
			continue
		}
		// It exists: the same configuration is nothing to do; another one
		// is replaced with --update, compare-and-set on the revision read.
		cur, err := svc.Read(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: en.Ref})
		if err != nil {
			unwritten++
			fmt.Fprintf(e.err, "%s: not imported: %s\n", label, explain(err))
			continue
		}
		switch {
		case sameServer(cur.Data, en.Name, en.Server):
			same++
			fmt.Fprintf(e.out, "mcp %s already registered as in %s (revision %d)\n", en.Ref, file, cur.Revision)
		case !update:
			differ++
			fmt.Fprintf(e.out, "mcp %s already registered with another configuration (revision %d); left unchanged\n", en.Ref, cur.Revision)
		default:
			res, err := svc.Write(ctx, resource.Direct(), resource.WriteRequest{
				Kind: resource.KindMCP, Ref: en.Ref, Data: doc, ExpectedRevision: cur.Revision,
			})
			if err != nil {
				unwritten++
				fmt.Fprintf(e.err, "%s: not updated: %s\n", label, explain(err))
				continue
			}
			fmt.Fprintf(e.out, "updated mcp %s (revision %d)\n", res.Resource.Ref, res.Resource.Revision)
		}
	}
	n := len(entries)
	switch {
	case invalid > 0 && dryRun:
		fmt.Fprintf(e.err, "%d of %d servers would not be imported; fix them in %s (nothing was written)\n", invalid, n, file)
	case invalid > 0:
		fmt.Fprintf(e.err, "%d of %d servers not imported; fix them in %s and import again\n", invalid, n, file)
	}
	if unwritten > 0 {
		fmt.Fprintf(e.err, "%d of %d servers could not be written (see above)\n", unwritten, n)
	}
	if same > 0 {
		fmt.Fprintf(e.err, "%d of %d servers were already registered as in %s: nothing to do for them\n", same, n, file)
	}
	if differ > 0 {
		fmt.Fprintf(e.err, "%d of %d servers are registered with another configuration and were left unchanged; 'agt mcp import %s --update' replaces them with the file's\n", differ, n, file)
	}
	if invalid+unwritten+differ > 0 {
		return errReported
	}
	return nil
}

// sameServer reports whether the stored MCP document data holds the server
// srv under name, as a write of it would store it (the transport written
// out).
func sameServer(data json.RawMessage, name string, srv resource.MCPServer) bool {
	curName, cur, err := resource.DecodeMCP(data)
	if err != nil || curName != name {
		return false
	}
	cur.Type, srv.Type = cur.Transport(), srv.Transport()
	a, errA := json.Marshal(cur)
	b, errB := json.Marshal(srv)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// readBounded reads at most limit bytes of a file, refusing a bigger one.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; give a file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes; the limit is %d", path, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}
