// Package taskcall carries what a Run says of the task a tool call may
// become to mcpconn's Session.CallTool: the task to resume (a host that
// restarted) and where to store the task the server creates. It is agt's
// own plumbing between run and mcpconn, not host API: a host resumes a
// task through a Run (run's task store), which keeps the task ids.
package taskcall

import (
	"context"
	"time"
)

// Info describes a task a server created for a call.
type Info struct {
	// ID is the server's task id.
	ID string
	// Protocol is the protocol version of the session that created it.
	Protocol string
	// Created is when the client read the server's answer.
	Created time.Time
	// TTL is how long the server keeps the task from its creation; 0
	// means no limit.
	TTL time.Duration
}

// Call is what a caller says of the task a call may become (With).
type Call struct {
	// Resume is the id of a task the server created for this same call
	// earlier (a host that restarted): CallTool sends no tools/call and
	// follows that task to its result instead. "" means a new call.
	Resume string
	// Created, when not nil, is told the task the server created for the
	// call, before it is first polled (a Run stores it, to resume). An
	// error cancels the task (tasks/cancel) and fails the call with it.
	Created func(Info) error
}

type key struct{}

// With returns a context that carries c to Session.CallTool.
func With(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From returns the Call With put in ctx, or nil.
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(key{}).(*Call)
	return c
}
