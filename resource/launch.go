package resource

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/agtsdk/agt/internal/findcode"
	"github.com/agtsdk/agt/internal/weborigin"
)

// The launch rules of a stdio server live here, in one function, because
// two parts apply them: Service.Test checks them without starting anything
// and package mcpconn starts the process from the result. resource may not
// import mcpconn (mcpconn imports resource), and a check injected from
// mcpconn would leave every Service built without it checking by other
// rules; a function of the document and of the environment the child gets
// has one answer for both.

// DefaultInheritEnv returns the part of the host's environment a stdio
// server inherits by default; a name ending in '*' is a prefix. Each call
// returns a new slice: changing it changes nothing else.
func DefaultInheritEnv() []string {
	return []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TZ", "TMPDIR"}
}

// LaunchEnv is how the host launches servers: which part of its
// environment a stdio server inherits, which servers may start (the
// launch allowlist), and how the secret references of a document resolve.
// One value travels every layer: mcpconn.ConnectorOptions.LaunchEnv
// configures the starts, and ServiceOptions.LaunchEnv, given the same
// value, makes the static test judge by it (agt.Host gives its Service
// its Connector's). The fix texts of launch and secret errors name the
// field of the option that applies. The zero
// value means the defaults: the DefaultInheritEnv list, any server, and
// no secret reference resolved.
type LaunchEnv struct {
	// Inherit lists the host environment variables a stdio server
	// inherits; a name ending in '*' is a prefix. Nil means
	// DefaultInheritEnv(); an empty non-nil slice passes none. The
	// document's env is added on top either way.
	Inherit []string
	// InheritAll passes the host's whole environment (Inherit is then
	// ignored). False means the list.
	InheritAll bool
	// Environ returns the host environment; nil means os.Environ. It
	// serves both the inherited environment and ${env:NAME} references.
	Environ func() []string
	// Allow is the launch allowlist: which commands, working directories
	// and URL origins may be started or contacted. Every start by the
	// document consults it (ResolveLaunch, ResolveRemote): Runs,
	// refreshes, probes, the static Test and the writes of agent callers.
	// Nil means any, as without an allowlist.
	Allow *LaunchAllowlist
	// Secrets resolves the ${secret:NAME} references in a document's
	// args, env values and header values, at each start, with the
	// reference of the registration they belong to. Nil means none: a
	// ${secret:...} reference fails the start with an error that names
	// it.
	Secrets SecretResolver
	// SecretEnv binds host environment variables to the registrations
	// whose ${env:NAME} references may read them, as REF=NAME entries:
	// "gh=GH_TOKEN" lets only registration gh read GH_TOKEN, so a server
	// an agent registers reads none. Each side is exact or, ending in
	// '*', a prefix: "team/*=TEAM_*"; "*=NAME" lets every registration,
	// one an agent created included, read NAME. An entry without '='
	// binds nothing. Nil or empty means none: a ${env:...} reference
	// fails the start with an error that names it and the registration.
	// It is separate from the environment a stdio server inherits, and
	// Secrets does not widen it.
	SecretEnv []string

	// setBy is the option the host set this value through, which fix
	// texts name; "" is the Connector's. NewService sets its own unless
	// agt.Host marked the Connector's (internal/resourcefn).
	setBy string
}

// connectorOption is the option a LaunchEnv is set through unless
// setBy says otherwise: the Connector starts the servers.
const connectorOption = "mcpconn.ConnectorOptions.LaunchEnv"

// field names field f of the option e was set through, for a fix text:
// "mcpconn.ConnectorOptions.LaunchEnv.Inherit".
func (e *LaunchEnv) field(f string) string {
	if e == nil || e.setBy == "" {
		return connectorOption + "." + f
	}
	return e.setBy + "." + f
}

// LaunchAllowlist says which servers may be started or contacted. The host
// sets it (mcpconn.ConnectorOptions.LaunchEnv.Allow), and every start
// consults it through ResolveLaunch and ResolveRemote: a Run, a refresh,
// a probe, the CLI, the static Test, and the write of an agent caller.
// Each list that is nil admits anything, but Env, where nil admits no
// name; an empty non-nil list admits nothing.
//
// The list names programs, not what they do: admitting an interpreter or
// a launcher (sh, node, python, npx, uvx) admits whatever its arguments
// make it run.
type LaunchAllowlist struct {
	// Commands lists the programs a stdio server may run. An absolute path
	// admits exactly that file (the resolved executable, after the
	// document's PATH lookup, cleaned; symbolic links are not followed). A
	// bare name admits the program the name resolves to in the host's own
	// PATH (the absolute entries of PATH in the host environment, as
	// LaunchEnv.Environ returns it), so a document cannot reach another
	// file of that name by setting its own PATH. Other entries admit
	// nothing. Nil means any command.
	Commands []string
	// Dirs lists the directories a stdio server's cwd must be, or be
	// inside: absolute paths, compared after symbolic links are resolved on
	// both sides. Nil means any directory.
	Dirs []string
	// Origins lists the origins a remote server's url may have:
	// "https://mcp.example.com" or "http://127.0.0.1:8080" (scheme, host
	// and port; the scheme's default port may be left out; no path).
	// Redirects never leave a server's origin. Nil means any origin.
	Origins []string
	// Env lists the env names a registration's env may set when an agent
	// caller writes it, and the start-altering ones (see below) any
	// registration may carry at start; a name ending in '*' is a prefix.
	// Unlike the other lists, nil means none: with an allowlist an agent
	// caller may add or change no env name, and no registration starts
	// with a start-altering name. Start-altering names are those that
	// change what a program runs before or instead of its own code: LD_*,
	// DYLD_*, BASH_ENV, ENV, BASH_FUNC_*, SHELLOPTS, BASHOPTS, IFS, PS4,
	// ZDOTDIR, PATH, PYTHON*, PERL5*, PERLLIB, RUBY*, NODE_OPTIONS,
	// NODE_PATH, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, JDK_JAVA_OPTIONS,
	// CLASSPATH, BROWSER, GIT_*, GCONV_PATH, NPM_CONFIG_*, UV_* and PIP_*,
	// in any case. Without an allowlist an agent caller may set any other
	// name. A direct caller may store any env either way.
	Env []string
}

// Clone returns a deep copy of a (nil for nil), so that a caller's later
// change of its slices changes no launch decision.
func (a *LaunchAllowlist) Clone() *LaunchAllowlist {
	if a == nil {
		return nil
	}
	return &LaunchAllowlist{Commands: slices.Clone(a.Commands), Dirs: slices.Clone(a.Dirs), Origins: slices.Clone(a.Origins), Env: slices.Clone(a.Env)}
}

// Clone returns a copy of e whose Inherit, Allow and SecretEnv are its
// own.
func (e LaunchEnv) Clone() LaunchEnv {
	e.Inherit = slices.Clone(e.Inherit)
	e.Allow = e.Allow.Clone()
	e.SecretEnv = slices.Clone(e.SecretEnv)
	return e
}

// startAltering lists the env names (a trailing '*' a prefix, compared in
// upper case, as Windows compares them) that change what a program runs
// before or instead of its own code: the dynamic loader's, a shell's
// startup and function variables, the option and path variables of
// interpreters, the programs that tools launch for themselves (BROWSER,
// GIT_SSH_COMMAND), and the registries of package launchers. An admitted
// interpreter given one runs whatever it says, with no file on disk.
var startAltering = []string{
	"LD_*", "DYLD_*", "GCONV_PATH",
	"BASH_ENV", "ENV", "BASH_FUNC_*", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "ZDOTDIR", "PATH",
	"PYTHON*", "PERL5*", "PERLLIB", "RUBY*", "NODE_OPTIONS", "NODE_PATH",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	"BROWSER", "GIT_*", "NPM_CONFIG_*", "UV_*", "PIP_*",
}

func startAlteringEnv(name string) bool { return envAllowed(strings.ToUpper(name), startAltering) }

// admitsEnv reports whether an agent caller may set the env name: under
// an allowlist only a name its Env lists, without one (a nil a) any name
// but a start-altering one.
func (a *LaunchAllowlist) admitsEnv(name string) bool {
	if a == nil {
		return !startAlteringEnv(name)
	}
	return envAllowed(name, a.Env)
}

func notAllowed(field, msg, fix string) *LaunchError {
	return &LaunchError{Code: findcode.NotAllowed, Field: field, Message: msg, Fix: fix}
}

// allowsDir reports whether the existing directory cwd is a listed
// directory or inside one, after symbolic links.
func (a *LaunchAllowlist) allowsDir(cwd string) bool {
	if a == nil || a.Dirs == nil {
		return true
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return false
	}
	for _, d := range a.Dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		root := filepath.Clean(d)
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		if within(real, root) {
			return true
		}
	}
	return false
}

func within(path, root string) bool {
	if path == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(path, root)
}

// allowsCommand reports whether the resolved executable path is a listed
// program: an absolute entry equal to it, or a bare entry that resolves to
// it in the host's PATH.
func (a *LaunchAllowlist) allowsCommand(path string, environ func() []string) bool {
	if a == nil || a.Commands == nil {
		return true
	}
	path = filepath.Clean(path)
	var hostPath *string
	for _, c := range a.Commands {
		switch {
		case filepath.IsAbs(c):
			if filepath.Clean(c) == path {
				return true
			}
		case c != "" && !strings.ContainsAny(c, `/\`):
			if hostPath == nil {
				p := envValue(environ(), "PATH")
				hostPath = &p
			}
			if found, ok := lookPathAbs(c, *hostPath); ok && found == path {
				return true
			}
		}
	}
	return false
}

// lookPathAbs finds name in the absolute entries of pathVar.
func lookPathAbs(name, pathVar string) (string, bool) {
	for _, dir := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if ok, _ := executable(p); ok {
			return filepath.Clean(p), true
		}
	}
	return "", false
}

// allowsOrigin reports whether u's origin is listed.
func (a *LaunchAllowlist) allowsOrigin(u *url.URL) bool {
	if a == nil || a.Origins == nil {
		return true
	}
	want := weborigin.Of(u)
	for _, o := range a.Origins {
		ou, err := url.Parse(o)
		if err != nil || ou.Host == "" || (ou.Path != "" && ou.Path != "/") || ou.RawQuery != "" || ou.User != nil {
			continue // not an origin: admits nothing
		}
		if weborigin.Of(ou) == want {
			return true
		}
	}
	return false
}

// ResolveRemote applies the rules of a remote server to srv: its url must
// be an absolute http or https URL with a host, whose origin the launch
// allowlist of env admits (nil env: any). It contacts nothing. package
// mcpconn reaches servers at the URL it returns; Service.Test and the
// write of an agent caller judge by it too.
func ResolveRemote(srv MCPServer, env *LaunchEnv) (*url.URL, error) {
	if t := srv.Transport(); t != TransportHTTP && t != TransportSSE {
		return nil, &LaunchError{Code: findcode.Transport, Field: "/type", Message: "only a remote server is reached by url; a stdio one is launched", Fix: "launch it instead"}
	}
	u, err := url.Parse(srv.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &LaunchError{Code: findcode.URL, Field: "/url", Message: "url must be an absolute http:// or https:// URL", Fix: "write the server's full URL, like https://mcp.example.com/mcp"}
	}
	if env != nil && !env.Allow.allowsOrigin(u) {
		return nil, notAllowed("/url", "the url's origin is not in the launch allowlist",
			"use a server at an admitted origin, or have the host add the origin (scheme://host:port) to LaunchAllowlist.Origins")
	}
	return u, nil
}

// Launch is a stdio server resolved for starting: what to execute, with
// which arguments, where and with which environment.
type Launch struct {
	// Path is the executable file: the absolute command, or the bare
	// command found in the PATH the server gets.
	Path string
	// Args is the argument vector: the command as written, then args with
	// ${cwd} and ${workspace} expanded.
	Args []string
	// Dir is the cleaned absolute cwd the process runs in.
	Dir string
	// Env is the server's whole environment, "NAME=value" entries.
	Env []string
}

// LaunchError says why a stdio server cannot be started as stored. Code
// is one of "no_absolute_cwd", "command", "wrong_type" (an env name),
// "transport" (not a stdio server), "url", "cwd_missing",
// "command_not_found" and "not_allowed" (docs/findings.md); Field is a JSON pointer inside the server entry
// ("/cwd"). Like every message of this package it names fields, never
// their values.
type LaunchError struct {
	Code    string
	Field   string
	Message string
	Fix     string
}

func (e *LaunchError) Error() string {
	s := "resource: cannot launch the server: " + e.Message
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	return s
}

// ResolveLaunch applies the launch rules to the stdio server srv, with the
// environment env describes (nil means the defaults), and returns how it
// starts: cwd must be absolute and an existing directory; the environment
// is the inherited part of the host's, then srv.Env with its placeholders
// and secret references (resolve) expanded on top (an inherited PWD becomes cwd); a bare command is looked
// up in the PATH of that environment, relative PATH entries against cwd,
// where the server runs; an absolute command must be an executable file;
// any other command is refused; cwd and the resolved command must pass
// env's launch allowlist (LaunchEnv.Allow). It reads the file system and
// starts nothing. Service.Test and package mcpconn both call it, so a static test
// and a start never disagree. resolve resolves the secret references
// (${env:NAME}, ${secret:NAME}) in args and env values for one start
// (package mcpconn binds them to the registration); nil leaves them as
// written, for a check that starts nothing.
func ResolveLaunch(srv MCPServer, env *LaunchEnv, resolve func(kind, name string) (string, error)) (Launch, error) {
	if env == nil {
		env = &LaunchEnv{}
	}
	if srv.Transport() != TransportStdio {
		return Launch{}, &LaunchError{Code: findcode.Transport, Field: "/type", Message: "only a stdio server is launched; a remote one is reached by url", Fix: "connect to the url instead"}
	}
	cwd := srv.Cwd
	if !filepath.IsAbs(cwd) {
		return Launch{}, &LaunchError{Code: findcode.NoAbsoluteCwd, Field: "/cwd",
			Message: "the stdio server has no absolute cwd (a record saved before cwd was required?)",
			Fix:     `set "cwd" to the absolute directory the server must run in`}
	}
	cwd = filepath.Clean(cwd)
	if srv.Command == "" {
		return Launch{}, &LaunchError{Code: findcode.Command, Field: "/command", Message: "the stdio server has no command",
			Fix: `set "command" to a program name found in PATH or an absolute path`}
	}
	for k := range srv.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			// "A=B" would reach the child as A with the value "B=...".
			return Launch{}, &LaunchError{Code: findcode.WrongType, Field: "/env", Message: "an env name is empty or holds '=' or NUL", Fix: "use names like API_TOKEN"}
		}
	}
	// The command is looked up and judged with the references as written:
	// a secret is resolved only for a server that may start.
	staticEnv, err := expandEnv(srv.Env, cwd, nil)
	if err != nil {
		return Launch{}, err
	}
	childEnv := env.childEnv(staticEnv, cwd)

	switch fi, err := os.Stat(cwd); {
	case err != nil:
		return Launch{}, &LaunchError{Code: findcode.CwdMissing, Field: "/cwd", Message: "cwd does not exist or cannot be read",
			Fix: "create the directory, or point cwd at the directory the server is installed in"}
	case !fi.IsDir():
		return Launch{}, &LaunchError{Code: findcode.CwdMissing, Field: "/cwd", Message: "cwd is not a directory",
			Fix: "point cwd at the directory the server runs in"}
	}
	if !env.Allow.allowsDir(cwd) {
		return Launch{}, notAllowed("/cwd", "cwd is not inside a directory of the launch allowlist",
			"run the server in an admitted directory, or have the host add its directory to LaunchAllowlist.Dirs")
	}
	path := srv.Command
	switch {
	case filepath.IsAbs(path):
		if ok, why := executable(path); !ok {
			return Launch{}, &LaunchError{Code: findcode.CommandMissing, Field: "/command", Message: "command " + why,
				Fix: "install the server there, correct the path, or make the file executable (chmod +x)"}
		}
	case relativeCommand(path):
		return Launch{}, &LaunchError{Code: findcode.Command, Field: "/command", Message: relativeCommandMessage, Fix: relativeCommandFix}
	default:
		found, ok := lookPath(path, envValue(childEnv, "PATH"), cwd)
		if !ok {
			msg, fix := "command is not found in the PATH the server gets", "install the program, or write its absolute path"
			if _, set := srv.Env["PATH"]; set {
				msg = "command is not found in the PATH set in env"
			} else if !hasEnv(childEnv, "PATH") {
				msg = "command is not found: the server gets no PATH (the host's PATH is not among the inherited variables)"
				fix = "write the command's absolute path, set PATH in env, or let the server inherit PATH (" + env.field("Inherit") + ")"
			}
			return Launch{}, &LaunchError{Code: findcode.CommandMissing, Field: "/command", Message: msg, Fix: fix}
		}
		path = found
	}
	environ := env.Environ
	if environ == nil {
		environ = os.Environ
	}
	if !env.Allow.allowsCommand(path, environ) {
		return Launch{}, notAllowed("/command", "the command is not in the launch allowlist (it names programs by absolute path, or by a bare name looked up in the host's PATH)",
			"use an admitted program, or have the host add it to LaunchAllowlist.Commands")
	}
	if env.Allow != nil {
		// Who wrote the document is unknown here: a start-altering name
		// starts only if the host listed it.
		for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
			if startAlteringEnv(k) && !envAllowed(k, env.Allow.Env) {
				return Launch{}, notAllowed("/env"+pointer(k), "the env name changes how the program starts (a loader, shell or interpreter variable, or PATH) and is not in the launch allowlist",
					"remove it, or have the host add it to LaunchAllowlist.Env")
			}
		}
	}
	if resolve != nil {
		docEnv, err := expandEnv(srv.Env, cwd, resolve)
		if err != nil {
			return Launch{}, err
		}
		childEnv = env.childEnv(docEnv, cwd)
	}
	argv := make([]string, 0, len(srv.Args)+1)
	argv = append(argv, srv.Command)
	for i, a := range srv.Args {
		v, err := expandValue("/args/"+strconv.Itoa(i), a, cwd, resolve, "\x00")
		if err != nil {
			return Launch{}, err
		}
		argv = append(argv, v)
	}
	return Launch{Path: path, Args: argv, Dir: cwd, Env: childEnv}, nil
}

// expandEnv expands the placeholders and, with resolve, the secret
// references of a document's env values.
func expandEnv(env map[string]string, cwd string, resolve resolver) (map[string]string, error) {
	out := make(map[string]string, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v, err := expandValue("/env"+pointer(k), env[k], cwd, resolve, "\x00")
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// childEnv builds the server's environment: the inherited part of the host
// environment, then the document's env (placeholders already expanded) on
// top. An
// inherited PWD names the host's directory: it becomes cwd, where the child
// runs, as a shell would set it.
func (e *LaunchEnv) childEnv(docEnv map[string]string, cwd string) []string {
	environ, inherit := e.Environ, e.Inherit
	if environ == nil {
		environ = os.Environ
	}
	if inherit == nil {
		inherit = DefaultInheritEnv()
	}
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, kv := range environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if e.InheritAll || envAllowed(k, inherit) {
			set(k, v)
		}
	}
	if _, ok := vars["PWD"]; ok {
		vars["PWD"] = cwd
	}
	keys := make([]string, 0, len(docEnv))
	for k := range docEnv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		set(k, docEnv[k])
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vars[k])
	}
	return out
}

func envAllowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds a bare command in the PATH the child will get; empty and
// relative PATH entries resolve against the child's cwd, as its own
// lookups would.
func lookPath(name, pathVar, cwd string) (string, bool) {
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, name)
		if ok, _ := executable(p); ok {
			return p, true
		}
	}
	return "", false
}

// executable reports whether path is a regular file that may be executed,
// and if not, why (for a message that does not repeat the path).
func executable(path string) (bool, string) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return false, "does not exist or cannot be read"
	case fi.IsDir():
		return false, "is a directory"
	case !fi.Mode().IsRegular():
		return false, "is not a regular file"
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		return false, "is not executable"
	}
	return true, ""
}

func hasEnv(env []string, name string) bool {
	return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}
