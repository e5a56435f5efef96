// Package mcpconn turns a stored MCP server document into a running,
// connected MCP session, and probes registered servers. It is the only way
// agt starts or reaches a server: a Run and the Prober both go through a
// Connector.
//
//	c := mcpconn.NewConnector(nil)
//	s, err := c.Connect(ctx, ref, srv) // srv from resource.DecodeMCP
//	if err != nil {
//		return err // *mcpconn.Error: errors.Is ErrNoAbsoluteCwd, ErrStart, ErrHandshake...
//	}
//	defer s.Close() // ends the whole process group
//	tools, err := s.Tools(ctx) // all pages; InputSchema is the server's exact bytes
//	res, err := s.CallTool(ctx, "search", json.RawMessage(`{"query":"a","limit":3}`))
//	// res.Content: typed blocks; res.ContentJSON, res.Structured: the exact bytes
//
//	p := mcpconn.NewProber(repo, c, nil)
//	report, err := p.Probe(ctx, "tools/search") // handshake, tools/list, compile; no tool call
//
// # Concurrency
//
// A Connector, a Session and a Prober are safe for concurrent use. Calls
// on one Session run concurrently over its single connection; Close cancels
// the calls in flight. Probes are independent of each other. The leases on
// a shared connection share its connection the same way; one mutex per
// Connector guards its shared connections, and no goroutine of theirs
// outlives Connector.Close.
package mcpconn
