// Package serverlog holds what mcpconn and run share to put an MCP
// server's log lines into a host's slog.Logger: the level a line goes at,
// its data as JSON (Data), the rate at which one server's lines may go,
// and which levels exist (Known: the levels a host may ask servers for).
//
//	var gate serverlog.Gate // one per server (connection or mount)
//	log := func(ctx context.Context, p *mcp.LoggingMessageParams) {
//		if !gate.Pass() {
//			return // counted; TakeDropped reports it with the next line
//		}
//		attrs := []slog.Attr{slog.String("server_level", string(p.Level)), serverlog.Data(p)}
//		if n := gate.TakeDropped(); n > 0 {
//			attrs = append(attrs, slog.Int64("dropped_before", n))
//		}
//		logger.LogAttrs(ctx, serverlog.Level(p.Level), "agt.server_log", attrs...)
//	}
//
// # Limits
//
// A Gate lets Burst (100) lines through at once, then Rate (20) per
// second; both are fixed.
//
// # Concurrency
//
// A Gate is safe for concurrent use; its zero value is ready.
package serverlog
