// Package run executes an agent's tool calls: a Run is one execution of an
// agent, with an immutable snapshot of its tools (the MCP servers mounted on
// the agent, plus the host's own tools) and the batch pipeline every model
// tool call goes through.
//
//	r, err := run.New(ctx, &run.Options{
//		Agent:      "writer",
//		Repository: repo,                // where the agent and MCP documents live
//		Permission: policy.AutoAllow(),  // required: there is no implicit allow
//	})
//	if err != nil { ... }
//	defer r.Close()
//	tools := r.Tools() // give these to the model
//	out, err := r.Execute(ctx, run.Batch{ID: "step-1", Agent: "writer", Calls: calls})
//	for _, res := range out.Results { send(res.CallID, res.ForModel()) }
//	if n := out.Notice(); n != "" { tell the model n }
//
// # The pipeline
//
//	Execute(ctx, Batch)
//	 1 batch checks   structure, unique non-empty call IDs, Batch.Agent, every
//	                  name in the snapshot, HostTool.Authorize (delegation)
//	                  -> any failure: *BatchError, nothing runs
//	 2 per call, concurrently (Options.MaxConcurrency), results in call order
//	   a validate     arguments are a JSON object valid for the schema
//	                  -> else invalid_arguments with violation paths; stop
//	                  (the call's ctx ends validation: deadline_exceeded or
//	                  canceled)
//	   b permission   Options.Permission.Check -> not Allow: permission_denied
//	   c interceptors Options.Interceptors, first = outermost:
//	                    first.before -> second.before -> execute
//	                    -> second.after -> first.after
//	                  run.Before(f) and run.After(f) adapt plain callbacks
//	   d execute      MCP session CallTool, or the host tool's Handler, at
//	                  most once per call, with the validated bytes
//	 3 audit          one Record per call (Options.Auditor); never argument values
//	                  (and one per request a server sent during it)
//	 4 boundary       a successful call changed this agent's document or a
//	                  mounted MCP resource (Result.Changed) -> refresh
//
// The Permission is a fixed stage, not an interceptor: it always sees the
// validated, final arguments. The Run validates and executes its own copy
// of each call's arguments, so neither the Permission nor an interceptor
// can change what the tool receives (Request.Arguments is their view), and
// an interceptor's next runs the tool at most once.
//
// # Errors
//
// A tool failure is a Result with a Code (the closed set invalid_arguments,
// permission_denied, unknown_tool, unauthorized, not_found, conflict,
// unavailable, deadline_exceeded, canceled, tool_error, internal) and a nil
// error; Result.ToolError renders the one ToolError JSON format. A Go error
// from Execute means the batch was rejected (*BatchError, ErrBatchRejected),
// the Run is closed (ErrClosed) or the context ended; the Outcome still
// holds one Result per call, with its call ID. New fails with
// ErrNoPermission, ErrAgentDisabled, ErrMountFailed or a repository error;
// Resume also with ErrFingerprintMismatch.
//
// # Concurrency
//
// A Run is safe for concurrent use. Permission, Interceptor, Auditor, host
// tool handlers, Elicit, Sample and Observe are called from several
// goroutines at once and must be safe for that. Close ends every connection (also those a refresh is about to
// unload) without waiting for running batches; their calls get
// unavailable. It cancels a refresh in progress (whose report then says
// ErrClosed) and returns once the Run's processes have ended: within about
// the Connector's termination grace. A panicking callback fails only its
// call; its value and stack go to the audit Record and Options.Logger,
// never to the model.
package run
