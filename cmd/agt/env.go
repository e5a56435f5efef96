package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agtsdk/agt"
	"github.com/agtsdk/agt/mcpconn"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// env is what one invocation of agt carries: its streams, the global flags,
// and the host, opened on first use.
type env struct {
	stdio
	global globalFlags
	h      *agt.Host
	// grace is how long a stdio server gets to exit at each step of its
	// shutdown (mcpconn.ConnectorOptions.Limits.TerminateGrace); 0 means
	// mcpconn's default. A --timeout sets it so that the shutdown fits in.
	grace time.Duration
	// stdinTaken is set when stdin held the arguments of agent call: it
	// cannot also answer the permission question.
	stdinTaken bool
	// term is agent call's terminal: its questions and progress line.
	term terminal
	// tasks follows the task of agent call's call, if any.
	tasks *taskWatch
	// sampling: agent call answers sampling (--sampling-command).
	sampling bool
	// launch is the launch environment of the servers agt starts: the
	// ${env:NAME} names of $AGT_SECRET_ENV, and the secret store for
	// ${secret:NAME}. Set by host.
	launch *resource.LaunchEnv
}

// launchEnv is the launch environment host gave the Connector.
func (e *env) launchEnv() *resource.LaunchEnv {
	if e.launch == nil {
		return &resource.LaunchEnv{}
	}
	return e.launch
}

// host opens the store named by --db (or its defaults) on first use. A
// bbolt file is opened in shared mode: only for the span of each
// operation, so a running host that also uses shared mode and the CLI can
// work on one file.
func (e *env) host(ctx context.Context) (*agt.Host, error) {
	if e.h != nil {
		return e.h, nil
	}
	store := e.global.store
	if store == "" {
		var err error
		if store, err = agt.DefaultStore(); err != nil {
			return nil, fmt.Errorf("%w, or pass --db STORE", err)
		}
	}
	secrets, err := e.openSecretStore()
	if err != nil {
		return nil, err
	}
	e.launch = &resource.LaunchEnv{SecretEnv: secretEnvNames(os.Getenv(secretEnvVar)), Secrets: secrets}
	opts := &agt.Options{Bolt: &boltrepo.Options{Shared: true},
		Connector: &mcpconn.ConnectorOptions{Limits: &mcpconn.Limits{TerminateGrace: e.grace}, LaunchEnv: e.launch}}
	h, err := agt.Open(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	e.h = h
	return h, nil
}

// secretEnvVar names the variable listing the host environment variables
// that ${env:NAME} references may read: entries separated by commas or
// spaces, a trailing '*' a prefix. An entry REF=NAME binds NAME to
// registration REF (the launch environment's SecretEnv); a bare NAME lets
// every server the command starts read it, since the operator names
// what the command starts. Unset or empty allows none.
const secretEnvVar = "AGT_SECRET_ENV"

func secretEnvNames(v string) []string {
	names := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	for i, n := range names {
		if !strings.Contains(n, "=") {
			names[i] = "*=" + n
		}
	}
	return names
}

func (e *env) close() {
	if e.h != nil {
		_ = e.h.Close()
	}
}

// hostForTimed starts the commands that start or contact servers: it parses
// the reference argument, checks --timeout, opens the store with a
// shutdown that fits in the timeout, and returns the time the work itself
// may take (timeoutBudget).
func (e *env) hostForTimed(ctx context.Context, cmd, refArg string, timeout time.Duration) (resource.Ref, *agt.Host, time.Duration, error) {
	ref, err := parseRefArg(cmd, refArg)
	if err != nil {
		return "", nil, 0, err
	}
	if timeout <= 0 {
		return "", nil, 0, usagef(cmd, "--timeout must be positive")
	}
	work, grace := timeoutBudget(timeout)
	e.grace = grace
	h, err := e.host(ctx)
	if err != nil {
		return "", nil, 0, err
	}
	return ref, h, work, nil
}

// Shutdown within --timeout. Stopping a stdio server that does not exit
// takes up to about three grace periods (stdin closed, SIGTERM, then the
// rest of its process group) and a little for its stderr: that time is
// kept out of the work's deadline, so that the whole command, shutdown
// included, ends within --timeout.
const (
	minGrace      = 100 * time.Millisecond
	maxGrace      = time.Second // below mcpconn's 2 s default: an operator waits
	stderrReserve = 300 * time.Millisecond
)

// timeoutBudget splits a --timeout into the work's deadline and the grace
// period of each shutdown step: grace is a twentieth of the timeout
// (between minGrace and maxGrace); the reserve, three graces and the
// stderr drain, is at most half the timeout.
func timeoutBudget(timeout time.Duration) (work, grace time.Duration) {
	grace = min(max(timeout/20, minGrace), maxGrace)
	reserve := min(3*grace+stderrReserve, timeout/2)
	return timeout - reserve, grace
}
