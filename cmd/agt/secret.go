package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
)

// agt secret set|list|rm: the values behind ${secret:NAME}, and the
// message of a start that failed on its references.

func secretCommands() []*leaf {
	return []*leaf{
		{
			name: "set", min: 1, max: 2, args: "NAME [--ref REF]...",
			summary: "store the value of ${secret:NAME}, read from stdin or typed at a prompt that does not echo",
			help: `The value is read from stdin (one trailing line break dropped), or, when
stdin is a terminal, typed at a prompt that does not show it. It is never
taken from the command line, where the shell history and the process list
would keep it. At most 64 KiB.

The value goes to the OS keychain (macOS Keychain, Windows Credential
Manager, a Secret Service on D-Bus) when one answers, else to secrets.json
beside the store's tokens.db (mode 0600; agt refuses the file when its
group or others may read it). $AGT_SECRET_STORE=file keeps values in the
file, =keyring requires the keychain. The names are listed in the file
either way.

A registration's ${secret:NAME} in an argument, an env value, a header or
an OAuth secret reads it when agt starts or contacts the server. --ref
keeps it for some registrations (exact, or a prefix ending in *); without
it every registration agt starts may read it.`,
			define: func(fs *flag.FlagSet) action {
				var refs stringList
				fs.Var(&refs, "ref", "only registration `REF` may read it (a trailing * is a prefix); repeat for more")
				return func(ctx context.Context, e *env, args []string) error {
					if len(args) > 1 {
						return usagef("secret set", "the value is never taken from the command line (the shell history and the process list keep it): pipe it on stdin, or type it at the prompt")
					}
					return secretSet(ctx, e, args[0], refs)
				}
			},
		},
		{
			name: "list", aliases: []string{"ls"}, min: 0, max: 0, args: "[--json]",
			summary: "list the names in the secret store (never the values)",
			define: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, `print [{"name", "where", "refs"}] as JSON`)
				return func(ctx context.Context, e *env, _ []string) error {
					return secretList(e, *asJSON)
				}
			},
		},
		{
			name: "rm", aliases: []string{"delete", "remove"}, min: 1, max: 1, args: "NAME",
			summary: "remove a secret from the store",
			define: func(*flag.FlagSet) action {
				return func(ctx context.Context, e *env, args []string) error {
					return secretRemove(ctx, e, args[0])
				}
			},
		},
	}
}

// validSecretName reports whether name can be written ${secret:NAME}:
// resource's rule, asked by scanning such a reference.
func validSecretName(name string) bool {
	_, err := resourcefn.ResolveHeaders(map[string]string{"x": "${secret:" + name + "}"}, func(string, string) (string, error) { return "", nil })
	return err == nil && !strings.ContainsAny(name, "{}")
}

func secretSet(ctx context.Context, e *env, name string, refs []string) error {
	const cmd = "secret set"
	if !validSecretName(name) {
		return usagef(cmd, "NAME %s cannot be written ${secret:NAME}: use letters, digits and . _ - / (at most 128)", clip(name))
	}
	for _, r := range refs {
		if _, err := resource.ParseRef(strings.TrimSuffix(r, "*")); err != nil && !strings.HasSuffix(r, "*") {
			return usagef(cmd, "--ref %s: %s", clip(r), strings.TrimPrefix(err.Error(), "resource: "))
		}
	}
	s, err := e.openSecretStore()
	if err != nil {
		return err
	}
	value, err := e.readSecretValue(ctx, name)
	if err != nil {
		return err
	}
	where, replaced, err := s.set(ctx, name, value, refs)
	if err != nil {
		return err
	}
	what := "stored"
	if replaced {
		what = "replaced"
	}
	fmt.Fprintf(e.out, "%s secret %s in %s\n", what, name, where)
	return nil
}

// readSecretValue reads the value of agt secret set: typed at a prompt
// without echo when stdin is a terminal, else all of stdin.
func (e *env) readSecretValue(ctx context.Context, name string) (string, error) {
	const cmd = "secret set"
	if e.inIsTTY {
		var restore func()
		ok := false
		if f, isFile := e.in.(*os.File); isFile {
			restore, ok = echoOff(f)
		}
		if !ok {
			return "", usagef(cmd, "the terminal's echo cannot be turned off here: pipe the value on stdin")
		}
		// The echo comes back on every way out: the return, and a
		// signal that ends agt while the prompt waits, at once, even
		// before the read gives up: SIGINT and SIGTERM (main's context
		// ends), SIGQUIT and SIGHUP (which would end agt with the echo
		// off: here they end the prompt).
		restoreOnce := sync.OnceFunc(restore)
		defer restoreOnce()
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
		defer stop()
		context.AfterFunc(ctx, restoreOnce)
		fmt.Fprintf(e.err, "value of %s (not shown): ", name)
		line, err := e.term.input.readLine(ctx, e.in)
		restoreOnce()
		switch {
		case errors.Is(err, errLineTooLong):
			return "", usagef(cmd, "the value typed is longer than %d bytes: pipe it on stdin", maxAnswerBytes)
		case err != nil:
			return "", fmt.Errorf("no value typed: nothing stored")
		case line == "":
			return "", usagef(cmd, "the value is empty: nothing stored (agt secret rm %s removes a secret)", name)
		}
		return line, nil
	}
	b, err := io.ReadAll(io.LimitReader(e.in, maxSecretBytes+2))
	if err != nil {
		return "", fmt.Errorf("reading the value from stdin: %w", err)
	}
	b = trimLineEnd(b)
	switch {
	case len(b) > maxSecretBytes:
		return "", usagef(cmd, "the value on stdin is more than %d bytes", maxSecretBytes)
	case len(b) == 0:
		return "", usagef(cmd, "stdin held no value: nothing stored (pipe the value, or run it on a terminal to type it)")
	case strings.IndexByte(string(b), 0) >= 0:
		return "", usagef(cmd, "the value holds a NUL byte, which no argument or env value can carry")
	}
	return string(b), nil
}

// secretListEntry is one line of agt secret list --json.
type secretListEntry struct {
	Name  string   `json:"name"`
	Where string   `json:"where"` // "keyring" or "file"
	Refs  []string `json:"refs"`  // empty: every registration
}

func secretList(e *env, asJSON bool) error {
	s, err := e.openSecretStore()
	if err != nil {
		return err
	}
	names, entries, err := s.names()
	if err != nil {
		return err
	}
	list := make([]secretListEntry, 0, len(names))
	for _, n := range names {
		where := "file"
		if entries[n].Keyring {
			where = "keyring"
		}
		refs := entries[n].Refs
		if refs == nil {
			refs = []string{}
		}
		list = append(list, secretListEntry{Name: n, Where: where, Refs: refs})
	}
	if asJSON {
		return writeJSON(e.out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.out, "no secrets (store one with 'agt secret set NAME')")
		return nil
	}
	t := newTable(e.out)
	fmt.Fprintln(t, "NAME\tKEPT IN\tREADABLE BY")
	for _, l := range list {
		who := "every registration"
		if len(l.Refs) > 0 {
			who = strings.Join(l.Refs, ", ")
		}
		fmt.Fprintf(t, "%s\t%s\t%s\n", shown(l.Name, maxCellWidth), l.Where, shown(who, maxLineWidth))
	}
	return t.Flush()
}

func secretRemove(ctx context.Context, e *env, name string) error {
	s, err := e.openSecretStore()
	if err != nil {
		return err
	}
	found, err := s.remove(ctx, name)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("no secret %s in the store (see 'agt secret list')", clip(name))
	}
	fmt.Fprintf(e.out, "removed secret %s\n", name)
	return nil
}

// secretFailure is the CLI's account of a start that failed on its secret
// references: every reference of the registration that agt cannot
// resolve, at once, each with the command that fixes it.
type secretFailure struct {
	msg  string // one line
	hint string // "next: ..."
	err  error  // the library's
}

func (f *secretFailure) Error() string { return f.msg }
func (f *secretFailure) Unwrap() error { return f.err }

// unresolved is one reference agt cannot resolve.
type unresolved struct {
	raw, why, fix string
}

// withSecretHelp returns err, or, when err is a start that failed on a
// secret reference, a *secretFailure naming every unresolved reference
// of that registration (read again, resolved with the rules of the
// start).
func (e *env) withSecretHelp(ctx context.Context, err error) error {
	var ce *mcpconn.Error
	if e.h == nil || !errors.Is(err, mcpconn.ErrSecret) || !errors.As(err, &ce) || ce.Ref == "" {
		return err
	}
	if sf := e.secretAccount(ctx, ce.Ref); sf != nil {
		sf.err = err
		return sf
	}
	return err
}

// secretAccount is the account of the references of registration ref
// that agt cannot resolve now, nil when there is none (or the
// registration cannot be read).
func (e *env) secretAccount(ctx context.Context, ref resource.Ref) *secretFailure {
	if e.h == nil {
		return nil
	}
	res, err := e.h.Repository().Get(ctx, resource.Key{Kind: resource.KindMCP, Ref: ref})
	if err != nil {
		return nil
	}
	_, srv, err := resource.DecodeMCP(res.Data)
	if err != nil {
		return nil
	}
	missing := e.unresolvedRefs(ctx, ref, srv)
	if len(missing) == 0 {
		return nil
	}
	whys := make([]string, len(missing))
	fixes := []string{}
	for i, m := range missing {
		whys[i] = m.raw + " (" + m.why + ")"
		if m.fix != "" && !strings.Contains(strings.Join(fixes, "\n"), m.fix) {
			fixes = append(fixes, m.fix)
		}
	}
	msg := fmt.Sprintf("registration %s cannot start: %s not resolved: %s", ref, plural(len(missing), "reference is", "references are"), strings.Join(whys, ", "))
	return &secretFailure{msg: msg, hint: "next: " + strings.Join(fixes, "; ")}
}

// unresolvedRefs lists the references of srv that agt's launch
// environment cannot resolve for ref: the start's own resolver, asked for
// every reference instead of stopping at the first.
func (e *env) unresolvedRefs(ctx context.Context, ref resource.Ref, srv resource.MCPServer) []unresolved {
	le := e.launchEnv()
	bind := resourcefn.BindSecrets(le, ctx, string(ref))
	// resolveAll resolves every reference of srv with resolve, as a
	// start does; the first error it returns ends it.
	resolveAll := func(resolve func(kind, name string) (string, error)) error {
		if srv.Transport() == resource.TransportStdio {
			_, err := resource.ResolveLaunch(srv, le, resolve)
			return err
		}
		_, err := resourcefn.ResolveHeaders(srv.Headers, resolve)
		if o := srv.OAuth; o != nil {
			for _, kv := range [][2]string{{"client_secret", o.ClientSecret}, {"private_key", o.PrivateKey}, {"idp_client_secret", o.IdPClientSecret}} {
				if _, oerr := resourcefn.ResolveOAuthSecret(kv[0], kv[1], resolve); err == nil {
					err = oerr
				}
			}
		}
		return err
	}
	// Every reference that fails, going on past each: a candidate.
	type key struct{ kind, name string }
	var candidates []key
	seen := map[key]bool{}
	_ = resolveAll(func(kind, name string) (string, error) {
		v, err := bind(kind, name)
		if err == nil {
			return v, nil
		}
		if k := (key{kind, name}); !seen[k] {
			seen[k] = true
			candidates = append(candidates, k)
		}
		return "", nil // go on to the next reference
	})
	var out []unresolved
	for _, c := range candidates {
		if c.kind == "env" {
			// ${env:NAME:-DEFAULT} takes its default when NAME cannot be
			// read: NAME is missing only if a start fails on it, the
			// other references resolved.
			err := resolveAll(func(kind, name string) (string, error) {
				v, err := bind(kind, name)
				if kind == c.kind && name == c.name {
					return v, err
				}
				if err != nil {
					return "", nil
				}
				return v, nil
			})
			if err == nil {
				continue
			}
		}
		out = append(out, e.explainRef(ctx, le, ref, c.kind, c.name))
	}
	return out
}

// explainRef says why one reference is not resolved, and how to fix it
// with agt's commands and variables.
func (e *env) explainRef(ctx context.Context, le *resource.LaunchEnv, ref resource.Ref, kind, name string) unresolved {
	u := unresolved{raw: "${" + kind + ":" + name + "}"}
	if kind == "secret" {
		s, err := e.openSecretStore()
		if err == nil {
			err = s.why(ctx, ref, name)
		}
		switch {
		case errors.Is(err, errSecretNotForRef):
			u.why, u.fix = err.Error(), fmt.Sprintf("agt secret set %s --ref %s (with the refs it had, see 'agt secret list')", name, ref)
		case errors.Is(err, errSecretUnreadable):
			u.why, u.fix = err.Error(), "'agt secret list' says what is wrong with the store"
		case err != nil && !errors.Is(err, errSecretMissing):
			u.why, u.fix = "agt's secret store cannot be read: "+err.Error(), "'agt secret list' works once the store is fixed"
		default:
			u.why, u.fix = errSecretMissing.Error(), "agt secret set "+name
		}
		return u
	}
	// ${env:NAME}: not bound to the registration, or not set.
	listed := &resource.LaunchEnv{SecretEnv: le.SecretEnv, Environ: func() []string { return []string{name + "=x"} }}
	if _, err := resourcefn.BindSecrets(listed, ctx, string(ref))("env", name); err == nil {
		u.why, u.fix = "not set in agt's environment", "set "+name+" in agt's environment"
		return u
	}
	u.why = "not listed in $" + secretEnvVar
	u.fix = fmt.Sprintf("list it: %s=%s=%s (this registration only) or %s=%s (every one agt starts)", secretEnvVar, ref, name, secretEnvVar, name)
	return u
}

// probeSecretHelp is withSecretHelp for a probe: the report's error
// becomes the CLI's account too.
func (e *env) probeSecretHelp(ctx context.Context, rep *mcpconn.ProbeReport, err error) error {
	err = e.withSecretHelp(ctx, err)
	var sf *secretFailure
	if rep != nil && errors.As(err, &sf) {
		rep.Error = sf.msg
	}
	return err
}

// mountErrorText is the text of a mount's failure to load: the CLI's
// account of unresolved references, or the library's text without the
// server's output.
func mountErrorText(err error) string {
	var sf *secretFailure
	if errors.As(err, &sf) {
		return sf.msg
	}
	return mcpconn.ErrorText(err, false)
}
