package resource

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
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

// LaunchEnv says which part of the host's environment a stdio server
// inherits. The zero value means the defaults.
type LaunchEnv struct {
	// Inherit lists the host environment variables a stdio server
	// inherits; a name ending in '*' is a prefix. Nil means
	// DefaultInheritEnv(); an empty non-nil slice passes none. The
	// document's env is added on top either way.
	Inherit []string
	// InheritAll passes the host's whole environment (Inherit is then
	// ignored). False means the list.
	InheritAll bool
	// Environ returns the host environment; nil means os.Environ.
	Environ func() []string
	// Resolve resolves the secret references (${env:NAME},
	// ${secret:NAME}) in args and env values, for one start (see
	// Secrets.Bind). Nil leaves them as written, for a check that starts
	// nothing.
	Resolve func(kind, name string) (string, error)
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
// is one of CodeNoAbsoluteCwd, CodeCommand, CodeWrongType (an env name),
// CodeTransport (not a stdio server), CodeCwdMissing and
// CodeCommandMissing; Field is a JSON pointer inside the server entry
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
// and secret references (env.Resolve) expanded on top (an inherited PWD becomes cwd); a bare command is looked
// up in the PATH of that environment, relative PATH entries against cwd,
// where the server runs; an absolute command must be an executable file;
// any other command is refused. It reads the file system and starts
// nothing. Service.Test and package mcpconn both call it, so a static test
// and a start never disagree.
func ResolveLaunch(srv MCPServer, env *LaunchEnv) (Launch, error) {
	if env == nil {
		env = &LaunchEnv{}
	}
	if srv.Transport() != TransportStdio {
		return Launch{}, &LaunchError{Code: CodeTransport, Field: "/type", Message: "only a stdio server is launched; a remote one is reached by url", Fix: "connect to the url instead"}
	}
	cwd := srv.Cwd
	if !filepath.IsAbs(cwd) {
		return Launch{}, &LaunchError{Code: CodeNoAbsoluteCwd, Field: "/cwd",
			Message: "the stdio server has no absolute cwd (a record saved before cwd was required?)",
			Fix:     `set "cwd" to the absolute directory the server must run in`}
	}
	cwd = filepath.Clean(cwd)
	if srv.Command == "" {
		return Launch{}, &LaunchError{Code: CodeCommand, Field: "/command", Message: "the stdio server has no command",
			Fix: `set "command" to a program name found in PATH or an absolute path`}
	}
	for k := range srv.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			// "A=B" would reach the child as A with the value "B=...".
			return Launch{}, &LaunchError{Code: CodeWrongType, Field: "/env", Message: "an env name is empty or holds '=' or NUL", Fix: "use names like API_TOKEN"}
		}
	}
	// Placeholders and references are expanded before anything else, so a
	// failed reference fails the start before the file system is read.
	docEnv := make(map[string]string, len(srv.Env))
	for _, k := range sortedKeys(srv.Env) {
		v, err := expandValue("/env"+pointer(k), srv.Env[k], cwd, env.Resolve, "\x00")
		if err != nil {
			return Launch{}, err
		}
		docEnv[k] = v
	}
	argv := make([]string, 0, len(srv.Args)+1)
	argv = append(argv, srv.Command)
	for i, a := range srv.Args {
		v, err := expandValue("/args/"+strconv.Itoa(i), a, cwd, env.Resolve, "\x00")
		if err != nil {
			return Launch{}, err
		}
		argv = append(argv, v)
	}
	childEnv := env.childEnv(docEnv, cwd)

	switch fi, err := os.Stat(cwd); {
	case err != nil:
		return Launch{}, &LaunchError{Code: CodeCwdMissing, Field: "/cwd", Message: "cwd does not exist or cannot be read",
			Fix: "create the directory, or point cwd at the directory the server is installed in"}
	case !fi.IsDir():
		return Launch{}, &LaunchError{Code: CodeCwdMissing, Field: "/cwd", Message: "cwd is not a directory",
			Fix: "point cwd at the directory the server runs in"}
	}
	path := srv.Command
	switch {
	case filepath.IsAbs(path):
		if ok, why := executable(path); !ok {
			return Launch{}, &LaunchError{Code: CodeCommandMissing, Field: "/command", Message: "command " + why,
				Fix: "install the server there, correct the path, or make the file executable (chmod +x)"}
		}
	case strings.ContainsAny(path, `/\`):
		return Launch{}, &LaunchError{Code: CodeCommand, Field: "/command",
			Message: "command is a relative path: it would depend on the directory of whoever starts the server",
			Fix:     "write the absolute path (cwd joined with it), or a bare program name found in PATH"}
	default:
		found, ok := lookPath(path, envValue(childEnv, "PATH"), cwd)
		if !ok {
			msg, fix := "command is not found in the PATH the server gets", "install the program, or write its absolute path"
			if _, set := srv.Env["PATH"]; set {
				msg = "command is not found in the PATH set in env"
			} else if !hasEnv(childEnv, "PATH") {
				msg = "command is not found: the server gets no PATH (the host's PATH is not among the inherited variables)"
				fix = "write the command's absolute path, set PATH in env, or let the server inherit PATH (LaunchEnv.Inherit, mcpconn.ConnectorOptions.InheritEnv)"
			}
			return Launch{}, &LaunchError{Code: CodeCommandMissing, Field: "/command", Message: msg, Fix: fix}
		}
		path = found
	}
	return Launch{Path: path, Args: argv, Dir: cwd, Env: childEnv}, nil
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
