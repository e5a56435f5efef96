package mcpconn

import (
	"context"

	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConnectOptions are the choices of one Connect that are not in the
// server's document. A nil *ConnectOptions means none.
type ConnectOptions struct {
	// Handlers answer what the server sends on its own during the
	// session. Nil means none: no client capability is declared.
	Handlers *Handlers
}

// Handlers answer the requests and notifications a server sends on its
// own. Each nil field means the feature is not offered: its capability is
// not declared in the initialize handshake, and a request for it is
// refused.
type Handlers struct {
	// Elicit answers elicitation/create.
	Elicit func(ctx context.Context, in Incoming, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// CreateMessage answers sampling/createMessage.
	CreateMessage func(ctx context.Context, in Incoming, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// Roots answers roots/list.
	Roots func(ctx context.Context, in Incoming) ([]*mcp.Root, error)
	// Progress receives notifications/progress of the session's calls.
	Progress func(ctx context.Context, in Incoming, params *mcp.ProgressNotificationParams)
	// Log receives notifications/message.
	Log func(ctx context.Context, in Incoming, params *mcp.LoggingMessageParams)
	// ToolsChanged receives notifications/tools/list_changed.
	ToolsChanged func(ctx context.Context, in Incoming)
}

// Incoming says where a message the server sent on its own comes from.
type Incoming struct {
	// Ref is the session's reference.
	Ref resource.Ref
	// Calls are the tags (WithCallTag) of the session's calls in flight
	// when the message arrived, in the order they started; nil when none
	// was in flight. A progress notification names its call exactly:
	// Calls then holds that call only.
	Calls []any
}

// needsServerStream reports whether the session has a handler for what a
// server may send outside a call (on the standalone stream of streamable
// HTTP): any handler at all.
func (h *Handlers) needsServerStream() bool {
	return h != nil && (h.Elicit != nil || h.CreateMessage != nil || h.Roots != nil ||
		h.Progress != nil || h.Log != nil || h.ToolsChanged != nil)
}
