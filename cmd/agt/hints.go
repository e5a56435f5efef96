package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/run"
)

// The library's errors name the field and what to set; they never name a
// command of agt. This file is the one place that turns them into the
// command an operator runs: the library's sentinels and codes, matched with
// errors.Is and errors.As, mapped to agt's hints.

// hintSubject is what a hint is about, taken from the error.
type hintSubject struct {
	msg  string       // the error's message, as explain shows it
	ref  resource.Ref // the resource concerned, or ""
	kind resource.Kind
	code string // the DocumentError's or Finding's code, or ""
	// created: the error refused the creation of ref, which therefore
	// does not exist: no hint may say to update it.
	created bool
}

// refOr is the reference, or the word to put in its place.
func (s hintSubject) refOr(word string) string {
	if s.ref != "" {
		return string(s.ref)
	}
	return word
}

// hintRule maps one sentinel (and, for ErrInvalid, one code) to agt's
// hint. Rules are chosen by sentinels, codes and error types in the
// chain, never by the text of a message.
type hintRule struct {
	err  error
	also error  // a second error the chain must hold too, or nil
	code string // "" matches every code
	// cause, when set, must find its error type in the chain.
	cause func(err error) bool
	hint  func(s hintSubject) string
}

// dnsFailure: the chain holds a failed host name look-up.
func dnsFailure(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de)
}

// networkFailure: the chain holds a failed connection to a remote
// server's url: a dial that failed, or a connection refused, reset,
// aborted or unreachable (by the system's error codes). Not an HTTP
// answer, a TLS failure or any other failed request (*url.Error wraps
// them all): the server was reached then.
func networkFailure(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	for _, code := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EHOSTUNREACH, syscall.ENETUNREACH} {
		if errors.Is(err, code) {
			return true
		}
	}
	return false
}

// tlsFailure: the chain holds a failed TLS handshake: a certificate this
// machine does not trust or not valid for the host, a server that does
// not speak TLS, or the server's TLS alert (crypto/tls reports it as a
// *net.OpError of Op "remote error", the alert's type unexported).
func tlsFailure(err error) bool {
	var (
		cve *tls.CertificateVerificationError
		rhe tls.RecordHeaderError
		ech *tls.ECHRejectionError
		uae x509.UnknownAuthorityError
		hne x509.HostnameError
		cie x509.CertificateInvalidError
		oe  *net.OpError
	)
	return errors.As(err, &cve) || errors.As(err, &rhe) || errors.As(err, &ech) ||
		errors.As(err, &uae) || errors.As(err, &hne) || errors.As(err, &cie) ||
		errors.As(err, &oe) && oe.Op == "remote error"
}

// requestFailure: the chain holds a failed HTTP request to a remote
// server's url that is neither a DNS, connection nor TLS failure (the
// rules before it): a redirect refused, a request timed out.
func requestFailure(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// hintTable is every command hint of agt for a library error, first match
// wins: order the specific before the general.
var hintTable = []hintRule{
	{err: mcpconn.ErrNoAbsoluteCwd, hint: func(s hintSubject) string {
		return "next: agt mcp update " + s.refOr("REF") + " --cwd /abs/dir"
	}},
	{err: mcpconn.ErrLimit, hint: func(s hintSubject) string {
		return "next: the server sent more than agt accepts (the limit is named above); the CLI keeps the default limits, so check the server, or run it from a host that raises that limit"
	}},
	{err: mcpconn.ErrSecret, hint: func(hintSubject) string {
		return "next: a ${secret:NAME} reference reads agt's secret store: 'agt secret set NAME'; a ${env:NAME} reference reads NAME from agt's environment only when NAME is listed in $" + secretEnvVar + " (names separated by commas, a trailing * a prefix)"
	}},
	{err: mcpconn.ErrInvalidServer, hint: func(s hintSubject) string {
		return "next: 'agt mcp test " + s.refOr("REF") + "' shows what is wrong; 'agt mcp update " + s.refOr("REF") + "' fixes it"
	}},
	{err: mcpconn.ErrStart, cause: dnsFailure, hint: func(s hintSubject) string {
		return "next: the url's host name does not resolve: check the url ('agt mcp get " + s.refOr("REF") + "') and this machine's DNS; 'agt mcp update " + s.refOr("REF") + " --url URL' fixes the url"
	}},
	{err: mcpconn.ErrStart, cause: networkFailure, hint: func(s hintSubject) string {
		return "next: nothing answered at the url: check that the server runs and the url ('agt mcp get " + s.refOr("REF") + "'); 'agt mcp update " + s.refOr("REF") + " --url URL' fixes the url"
	}},
	{err: mcpconn.ErrStart, cause: tlsFailure, hint: tlsHint},
	{err: mcpconn.ErrHandshake, cause: tlsFailure, hint: tlsHint},
	{err: mcpconn.ErrStart, cause: requestFailure, hint: func(s hintSubject) string {
		return "next: the url was reached, but the request failed (the message says why): check the url and its headers ('agt mcp get " + s.refOr("REF") + "'); 'agt mcp update " + s.refOr("REF") + "' fixes them"
	}},
	{err: mcpconn.ErrStart, hint: func(s hintSubject) string {
		return "next: 'agt mcp test " + s.refOr("REF") + "' checks the command and cwd; 'agt mcp update " + s.refOr("REF") + "' fixes them"
	}},
	{err: mcpconn.ErrLoginRequired, hint: func(s hintSubject) string {
		return "next: agt mcp login " + s.refOr("REF") + " (opens the OAuth login; the token is kept for later runs)"
	}},
	{err: mcpconn.ErrUnauthorized, hint: func(s hintSubject) string {
		return "next: agt mcp update " + s.refOr("REF") + " --oauth, then 'agt mcp login " + s.refOr("REF") + "', for a server that uses OAuth; else a header: --header 'Authorization: Bearer ${env:NAME}' (NAME listed in $" + secretEnvVar + ")"
	}},
	{err: mcpconn.ErrWrongTransport, hint: func(s hintSubject) string {
		// The library's message says which type the url answers as.
		return "next: give the MCP endpoint's url: agt mcp update " + s.refOr("REF") + " --url URL; or, as the message says, switch the transport: --sse for an SSE-transport server, --sse=false for a streamable HTTP one"
	}},
	{err: mcpconn.ErrHandshake, also: context.DeadlineExceeded, hint: func(s hintSubject) string {
		return "next: a slow server needs a longer start: 'agt mcp update " + s.refOr("REF") + " --startup-timeout 90s'; 'agt mcp probe " + s.refOr("REF") + "' shows its stderr"
	}},
	{err: mcpconn.ErrHandshake, hint: func(s hintSubject) string {
		// A remote server's refusal (an HTTP error status) has no
		// stderr: the message names its status.
		return "next: the message says why the server did not answer (a stdio server's stderr is shown with it); 'agt mcp test " + s.refOr("REF") + "' checks the configuration, 'agt mcp update " + s.refOr("REF") + "' fixes it"
	}},
	{err: run.ErrAgentDisabled, hint: func(s hintSubject) string {
		return "next: agt agent update " + s.refOr("AGENT") + " --enabled=true"
	}},
	{err: resource.ErrInvalid, code: findcode.NoAbsoluteCwd, hint: func(s hintSubject) string {
		if s.created {
			return "next: give the directory it runs in: --cwd /abs/dir (\"cwd\" in --data)"
		}
		return "next: agt mcp update " + s.refOr("REF") + " --cwd /abs/dir"
	}},
	{err: resource.ErrInvalid, code: findcode.ServerCount, hint: func(hintSubject) string {
		return "next: register each server as its own resource: 'agt mcp import FILE' splits a file"
	}},
	{err: resource.ErrNotFound, hint: func(s hintSubject) string {
		switch s.kind {
		case resource.KindMCP:
			return "(see 'agt mcp list'; register it with 'agt mcp add' or 'agt mcp create')"
		case resource.KindAgent:
			return "(see 'agt agent list'; create it with 'agt agent create')"
		}
		return "(see 'agt mcp list' and 'agt agent list')"
	}},
	{err: resource.ErrExists, hint: func(hintSubject) string {
		return "(change it with 'update', or 'delete' it first)"
	}},
	{err: resource.ErrConflict, hint: func(s hintSubject) string {
		kind := s.kind
		if kind == "" {
			kind = resource.KindMCP
		}
		return "next: 'agt " + string(kind) + " get " + s.refOr("REF") + "' shows the stored revision; make your change again on it"
	}},
}

// tlsHint is the hint of a failed TLS handshake.
func tlsHint(s hintSubject) string {
	return "next: the TLS handshake with the url failed: for a server that speaks plain HTTP write the url with http://; else its certificate is not trusted by this machine or not valid for the url's host name ('agt mcp get " + s.refOr("REF") + "' shows the url; 'agt mcp update " + s.refOr("REF") + " --url URL' fixes it)"
}

// commandHint is agt's hint for err, or "". A hint whose command the
// message already names is left out.
func commandHint(err error, msg string) string {
	if sf := (*secretFailure)(nil); errors.As(err, &sf) {
		return sf.hint // names every reference to fix (secret.go)
	}
	s := subjectOf(err, msg)
	for _, r := range hintTable {
		if !errors.Is(err, r.err) || (r.also != nil && !errors.Is(err, r.also)) || (r.code != "" && r.code != s.code) || (r.cause != nil && !r.cause(err)) {
			continue
		}
		h := r.hint(s)
		if cmd := hintCommand(h); cmd != "" && strings.Contains(msg, cmd) {
			return ""
		}
		return h
	}
	return ""
}

// hintCommand is the agt command a hint names, up to its first flag or
// quote, so that a message that names it already is not told twice.
func hintCommand(h string) string {
	i := strings.Index(h, "agt ")
	if i < 0 {
		return ""
	}
	cmd := h[i:]
	if j := strings.IndexAny(cmd, "'-("); j > 0 {
		cmd = cmd[:j]
	}
	return strings.TrimSpace(cmd)
}

// subjectOf finds the resource and code an error is about.
func subjectOf(err error, msg string) hintSubject {
	s := hintSubject{msg: msg}
	var me *mcpconn.Error
	var ce *resource.ConflictError
	var de *resource.DocumentError
	var se *suggestedError
	switch {
	case errors.As(err, &se):
		s.ref, s.kind = se.ref, se.kind
	case errors.As(err, &me):
		s.ref, s.kind = me.Ref, resource.KindMCP
	case errors.As(err, &ce):
		s.ref, s.kind = ce.Key.Ref, ce.Key.Kind
	}
	var ae *aboutError
	if errors.As(err, &ae) {
		s.ref, s.kind, s.created = ae.ref, ae.kind, ae.created
	}
	if errors.As(err, &de) {
		s.code = de.Code
	}
	return s
}

// findingFix is agt's fix for a finding of a static test or agent check,
// in place of the library's, which names no command: "" keeps the
// library's. agent is the agent checked, ref the mount.
func findingFix(f resource.Finding, agent, ref resource.Ref) string {
	switch f.Code {
	case findcode.AgentDisabled:
		return "agt agent update " + string(agent) + " --enabled=true"
	case findcode.AgentMissing:
		return "agt agent create " + string(agent)
	case findcode.NoAbsoluteCwd, findcode.CwdMissing:
		if ref != "" {
			return "agt mcp update " + string(ref) + " --cwd /abs/dir"
		}
	case findcode.MountMissing:
		if ref != "" {
			return "register it ('agt mcp add " + string(ref) + " -- CMD'), or unmount it ('agt agent update " + string(agent) + " --remove-mcp " + string(ref) + "')"
		}
	}
	return ""
}

// suggestedError is a reference that was not found, with the registered
// one it most likely meant.
type suggestedError struct {
	err  error
	kind resource.Kind
	ref  resource.Ref
	near string // "" when nothing is near
}

func (e *suggestedError) Error() string { return e.err.Error() }
func (e *suggestedError) Unwrap() error { return e.err }

// aboutError names the resource an error is about, for the hints, when
// the error itself does not (a refused write, a disabled agent).
type aboutError struct {
	err     error
	kind    resource.Kind
	ref     resource.Ref
	created bool // the error refused to create ref
}

func (e *aboutError) Error() string { return e.err.Error() }
func (e *aboutError) Unwrap() error { return e.err }

// markedError is a message of agt's that errors.Is matches to a library
// sentinel, without the sentinel's own words.
type markedError struct {
	msg      string
	sentinel error
}

func (e *markedError) Error() string { return e.msg }
func (e *markedError) Unwrap() error { return e.sentinel }

// about marks err as being about the resource kind:ref; nil stays nil.
func about(err error, kind resource.Kind, ref resource.Ref) error {
	if err == nil {
		return nil
	}
	return &aboutError{err: err, kind: kind, ref: ref}
}

// aboutCreate marks err as the refusal to create the resource kind:ref,
// which does not exist; nil stays nil.
func aboutCreate(err error, kind resource.Kind, ref resource.Ref) error {
	if err == nil {
		return nil
	}
	return &aboutError{err: err, kind: kind, ref: ref, created: true}
}

// withRefSuggestion adds, to a not-found error for ref, the registered
// reference of the same kind nearest to it.
func (e *env) withRefSuggestion(ctx context.Context, kind resource.Kind, ref resource.Ref, err error) error {
	if !errors.Is(err, resource.ErrNotFound) || e.h == nil {
		return err
	}
	se := &suggestedError{err: err, kind: kind, ref: ref}
	if list, lerr := e.h.Resources().List(ctx, resource.Direct(), kind, ""); lerr == nil {
		refs := make([]string, len(list))
		for i, r := range list {
			refs[i] = string(r.Ref)
		}
		se.near = didYouMean(string(ref), refs)
	}
	return se
}

// explain is the message of an error every command can meet, with what to
// do next: agt's hint from the table, "did you mean", and the store's
// problems.
func explain(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"agt: ", "boltrepo: ", "pgrepo: ", "resource: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	msg = strings.ReplaceAll(msg, ": resource: ", ": ")
	switch {
	case errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch):
		return msg + "\nnext: this file is not a bbolt store; point --db (or $AGT_STORE) at an agt store, or at a new path to start one"
	case errors.Is(err, boltrepo.ErrDamaged):
		// boltrepo says what to do in Go terms; an operator gets the commands.
		what, _, _ := strings.Cut(msg, ": restore it from a backup")
		what = strings.Replace(what, "open the store: boltrepo: ", "the store ", 1)
		return what + ".\n" +
			"next: restore the file from a backup, or point --db (or $AGT_STORE) at a new path to start an empty store; " +
			"'bbolt check FILE' shows what is damaged (go install go.etcd.io/bbolt/cmd/bbolt@latest)"
	case errors.Is(err, berrors.ErrTimeout):
		// boltrepo's advice is for Go code; an operator needs the host's side.
		what, _, _ := strings.Cut(msg, "; close it there")
		what = strings.Replace(what, "open the store: boltrepo: ", "the store ", 1)
		return what + ": a host holds it open without shared mode.\n" +
			"next: stop that host, or let it open the store in shared mode (agt.Options{Bolt: &boltrepo.Options{Shared: true}}) so that agt can work beside it; hosts on several machines share a postgres:// store instead"
	}
	var se *suggestedError
	if errors.As(err, &se) && se.near != "" {
		msg += " (did you mean " + se.near + "?)"
	}
	if h := commandHint(err, msg); h != "" {
		if strings.HasPrefix(h, "(") {
			return msg + " " + h
		}
		return msg + "\n" + h
	}
	return msg
}
