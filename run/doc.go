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
// What Execute's error means, and why the model gets every Result even
// then: A model loop, below.
//
// # A model loop
//
// A host's loop asks the model, runs the tool calls of its answer as one
// batch, and sends every call's result back:
//
//	for {
//		calls := askModel(ctx, history, r.Tools()) // the answer's tool calls
//		if len(calls) == 0 {
//			return nil // the model is done
//		}
//		out, err := r.Execute(ctx, run.Batch{ID: step, Agent: agent, Calls: calls})
//		var rejected *run.BatchError
//		if err != nil && !errors.As(err, &rejected) {
//			return err // the Run is closed or ctx ended: stop
//		}
//		for _, res := range out.Results { // a rejected batch too
//			history = append(history, toolResult(res.CallID, res.ForModel(), res.Failed()))
//		}
//		if n := out.Notice(); n != "" {
//			history = append(history, note(n))
//		}
//	}
//
// The Outcome is the answer to the batch: one Result per call, in call
// order, with its call ID, whatever Execute returned, because model APIs
// want an answer to every tool call they made. A call that failed is a
// Result with a Code and a ToolError for the model, never a Go error.
// Outcome.Notice is what the model must also read about the batch (a
// refresh or a restart that failed).
//
// Execute's error says whether the loop goes on:
//
//   - nil: every call ran (or failed as a Result); go on.
//   - a *BatchError (errors.As): the batch was rejected whole and nothing
//     ran (a name the snapshot does not hold, a call ID used twice, the
//     wrong agent). Each Result carries the rejection's Code and Message:
//     send them, so the model learns its mistake and tries again; go on.
//   - any other error: stop. ErrClosed (the Run was closed; the calls are
//     unavailable), the ctx's error (canceled or past its deadline, the
//     calls canceled or deadline_exceeded), or what an Options.WrapExecute
//     returned (or that it did not run the batch). The Outcome still answers every call, for a history the
//     model API accepts if the conversation resumes.
//
// The adapters agtanthropic, agtopenai and agtresponses (module
// github.com/agtsdk/agt/adapter) each have an Execute that runs a model
// response's tool calls this way and returns what answers them all in
// that API's form, with an error only when the loop must stop.
//
// # The pipeline
//
//	Execute(ctx, Batch)
//	 1 batch checks   structure, unique non-empty call IDs, Batch.Agent, every
//	                  name in the snapshot, HostTool.Authorize (delegation)
//	                  -> any failure: *BatchError, nothing runs
//	 2 per call, concurrently (Options.Limits.MaxConcurrency), results in call order
//	   a validate     arguments are a JSON object valid for the schema
//	                  -> else invalid_arguments with violation paths; stop
//	                  (the call's ctx ends validation: deadline_exceeded or
//	                  canceled)
//	   b permission   Options.Permission.Check -> not Allow: permission_denied
//	   c interceptors Options.Interceptors, first = outermost:
//	                    first.before -> second.before -> execute
//	                    -> second.after -> first.after
//	                  run.Before(f) and run.After(f) adapt plain callbacks;
//	                  a Before hands per-call state to a later After (ctx)
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
// # Tool results and ForModel
//
// An MCP tool's Result keeps what the server sent, byte for byte (less
// the mount's secrets, masked by mcpconn): Content is the "content" array,
// Structured the "structuredContent"; Result.Blocks gives the typed
// blocks, a block type agt does not know included. ForModel is what the
// host sends back to the model: a failed call's ToolError only; with a
// Notice, the content blocks and a last text block holding it; with a
// block that is not text, the content blocks; else the structured content
// when present, else the content blocks. Content is decoded once: an MCP
// call's Result carries the blocks mcpconn read from the wire, and
// ForModel, Blocks and the adapters use them. The full rules:
// docs/tool-results.md.
//
// # Refresh at the batch boundary
//
// All calls of a batch use the snapshot the batch started with. At its
// end the Run refreshes when a successful call changed this agent's
// document or a mounted MCP resource (Result.Changed), restarts a mount
// whose connection was lost (Options.Limits.MaxRestarts, with a backoff; no call
// is sent again), and lists again the tools of a server that said they
// changed (at most once per Options.Limits.MinRelistInterval). It connects,
// lists and compiles before it switches, and never blocks a batch or
// Close; on a failure the old tools stay and the Notice says so. The full
// rules: docs/refresh-and-restart.md.
//
// # Requests and notifications from servers
//
// A mounted server may ask the Run's host during a call: Options.ClientFeatures.Elicit
// (elicitation, form and url modes), Options.ClientFeatures.Sample (sampling, at most
// Options.Limits.MaxSamplingPerCall per call) and Options.ClientFeatures.Roots (Run.SetRoots
// changes them); a capability is declared only when its handler is set.
// Each handler gets an Origin naming the call the request names. Every
// request, answered or refused, is audited, never a value. Progress, log
// lines and tool list changes go to Options.ClientFeatures.Observe and, at a bounded
// rate, to Options.Logger; a call's result waits for the notifications
// before it. The Permission does not see these requests: the handler is
// the host's consent. The full rules: docs/server-requests.md.
//
// # Tasks
//
// A server may answer a call with a task; the Run follows it within the
// call's bounds and the model sees the task's result, exactly the one the
// call would have had at once, or its error. With a RunID and a
// Repository that keeps tasks (resource.TaskStore), the task's handle is
// stored, so a Run with the same RunID that executes the interrupted
// batch again with the same call IDs takes the task's result once instead
// of calling the tool again (handles live at most 24 hours). The
// full rules: docs/tasks.md.
//
// # Shared servers
//
// A registration with "shared": true is shared by the Runs of one
// Connector that mount it at the same revision with the same handlers:
// one connection, one process, the calls of all their users in it, so
// share only a server that keeps no state of a user's. Each Run keeps its
// own snapshot, permission decisions and audit; what the server sends
// reaches only the Run whose call it names; a crash is charged only to
// the Runs with calls in flight. The full rules:
// docs/shared-connections.md.
//
// # Aliases, fingerprints and server output
//
// An MCP tool's name is Alias(ref, tool), a pure function of the pair.
// Fingerprint covers the host's StaticInputs and, per tool, its alias,
// source and input schema digest; Checkpoint and Resume refuse a changed
// configuration (ErrFingerprintMismatch). Tools and Instructions hand the
// host what the servers said about their tools. What a stdio server
// writes on stderr is for its operator: the text a model reads never
// holds it unless Options.ServerStderrToModel is set. The full rules:
// docs/tools-and-listings.md, docs/errors.md.
//
// # Limits
//
// Each mount is bounded by its Connector (mcpconn). A Run also bounds
// what its mounts list together (Options.Limits.MaxToolsPerRun, default 10000 tools;
// Options.Limits.MaxListBytesPerRun, default 64 MiB), its mounts (256, fixed), a
// batch (Options.Limits.MaxBatchCalls, default 256), sampling per call and the
// servers' lines to Options.Logger. The table: docs/limits.md.
//
// # Errors
//
// A tool failure is a Result with a Code (the closed set invalid_arguments,
// permission_denied, unknown_tool, unauthorized, not_found, conflict,
// unavailable, deadline_exceeded, canceled, tool_error, internal) and a nil
// error; Result.ToolError renders the one ToolError JSON format. Execute's
// errors, and what a loop does with each: A model loop, above. New fails without a
// Permission, with ErrAgentDisabled, with a MountError (errors.As) when
// Options.FailOnMountError is set, or with a repository error; Resume
// also with ErrFingerprintMismatch.
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
