// Package pgrepo is a resource.Repository on PostgreSQL (via pgx), for hosts
// that run on several machines or want their registrations in a database
// they already operate. It has the semantics of the default bbolt store:
// revisions start at 1, strictly increase and never repeat for a key, even
// after delete and create; compare-and-set is atomic; Modify is an atomic
// read-modify-write.
//
//	repo, err := pgrepo.Open(ctx, "postgres://agt@db.internal/agt", nil)
//	if err != nil {
//		return err
//	}
//	defer repo.Close()
//	key := resource.Key{Kind: resource.KindAgent, Ref: "ops/triage"}
//	res, err := repo.Create(ctx, key, json.RawMessage(`{"mcps":[]}`))
//	// ... later, a save from a form that read revision res.Revision:
//	_, err = repo.Update(ctx, key, newData, res.Revision)
//	if errors.Is(err, resource.ErrConflict) { /* someone saved first */ }
//
// Importing the package also registers the postgres:// and postgresql://
// URL schemes (resource.RegisterStore): agt.Open then opens such a URL
// with default Options. A host that needs other Options calls Open itself
// and passes the repository to agt.New.
//
// # Table
//
// Open creates this table (in Options.Schema when set, creating that schema
// too) when missing. Hosts that manage migrations themselves create it and
// set Options.SkipCreate:
//
//	CREATE TABLE IF NOT EXISTS agt_resources (
//		kind       text COLLATE "C" NOT NULL,
//		ref        text COLLATE "C" NOT NULL,
//		revision   bigint NOT NULL CHECK (revision > 0),
//		deleted    boolean NOT NULL DEFAULT false,
//		data       bytea NOT NULL,
//		created_at timestamptz NOT NULL,
//		updated_at timestamptz NOT NULL,
//		PRIMARY KEY (kind, ref)
//	);
//
// data holds the resource's JSON bytes exactly as written (read them with
// convert_from(data, 'UTF8')::jsonb). A deleted resource stays as a tombstone
// row (deleted = true, empty data) that keeps the key's last revision, so the
// next Create continues after it: one tombstone per key ever deleted and
// not re-created. The "C" collation makes List's order the byte order of
// references, as in the other stores.
//
// # Token table
//
// Repo.TokenStore returns a resource.TokenStore (OAuth credentials of MCP
// registrations, apart from the documents) on a table of its own, in the
// same schema, created by the store's first Load or Update when missing
// (so a host that never uses OAuth never creates it); with
// Options.SkipCreate that call only checks it. A call that cannot create
// or check it fails with an error naming the table, and the next call
// tries again:
//
//	CREATE TABLE IF NOT EXISTS agt_oauth_tokens (
//		ref        text COLLATE "C" PRIMARY KEY,
//		data       bytea CHECK (octet_length(data) <= 65536),
//		updated_at timestamptz NOT NULL DEFAULT now()
//	);
//
// Grant it only to the roles of the hosts: it holds credentials. Update
// runs, in one transaction, an insert of a placeholder row (data NULL,
// never committed), SELECT ... FOR UPDATE, the caller's function and the
// write (or DELETE): the row lock serializes refreshes of several hosts,
// also for a value that does not exist yet. A transaction that found its
// row deleted by another writer is repeated, at most 8 times. The CHECK
// bounds a value to resource.MaxTokenBytes.
//
// # Task table
//
// A Repo is a resource.TaskStore: the handles of the MCP tasks of Runs
// live in a table of their own, in the same schema, created with its
// index by the first SaveTask, Tasks or DeleteTask when missing (with
// Options.SkipCreate that call only checks it, as for the token table):
//
//	CREATE TABLE IF NOT EXISTS agt_tasks (
//		run_id     text COLLATE "C" NOT NULL CHECK (octet_length(run_id) BETWEEN 1 AND 256),
//		call_id    text COLLATE "C" NOT NULL CHECK (octet_length(call_id) BETWEEN 1 AND 256),
//		server     text NOT NULL CHECK (octet_length(server) BETWEEN 1 AND 128),
//		revision   bigint NOT NULL CHECK (revision > 0),
//		tool       text NOT NULL CHECK (octet_length(tool) BETWEEN 1 AND 256),
//		task_id    text NOT NULL CHECK (octet_length(task_id) BETWEEN 1 AND 1024),
//		protocol   text NOT NULL CHECK (octet_length(protocol) BETWEEN 1 AND 64),
//		created_at timestamptz NOT NULL,
//		expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
//		PRIMARY KEY (run_id, call_id)
//	);
//	CREATE INDEX IF NOT EXISTS agt_tasks_expires_at ON agt_tasks (expires_at);
//
// SaveTask first deletes up to 256 expired handles of any run (one
// statement, skipping rows other transactions hold), then runs one
// transaction that takes an advisory lock of the run
// (pg_advisory_xact_lock(1634169972, hashtext(run_id))), deletes the
// run's expired handles, counts its others against resource.TaskStore's bound of 1024
// and inserts or replaces the row: hosts saving to one run at once never
// pass the bound together. Tasks reads at most 1025 rows (the bound and one) and
// refuses a run of more, or a row resource.CheckTask refuses, as written
// by something else. Expiry is judged by the host's clock, not the
// server's.
//
// # Errors
//
// The sentinels of package resource: resource.ErrNotFound,
// resource.ErrExists, and *resource.ConflictError (errors.Is
// resource.ErrConflict) carrying the stored revision. A write whose
// statement was sent but never confirmed, because the connection broke or
// the context ended, returns an error that wraps ErrUnknownOutcome: it may or
// may not have been applied, and the repository does not retry it, so a
// write is never applied twice. Any other failed write applied nothing.
// Reads are retried when a pooled connection turns out to be dead, and so is
// a Modify whose transaction broke before COMMIT; a statement that may
// have committed is never sent twice. The pool checks a connection that sat
// idle for over a second before using it, so the cost of a server restart is
// small: a write sent within that second on a connection the server had
// already closed reports ErrUnknownOutcome, because the driver cannot tell it
// from a commit whose answer was lost.
//
// # Performance
//
// A successful call is one round trip (Modify: four, in one transaction; a
// refused compare-and-set: two, to report the stored revision), so a read
// costs a network or socket round trip where boltrepo reads memory. Measured
// with BenchmarkRead and BenchmarkWrite (medians of 10 runs, local server on a
// Unix socket, 2 noisy cores): a read takes about 30 to 70 times as long as
// boltrepo's; a compare-and-set write takes about 1.2 times boltrepo's when
// both fsync each commit, and about 0.1 times when the server runs with
// fsync off. pgrepo stays within noise of raw pgx running the same SQL.
//
// # Concurrency
//
// A Repo is safe for concurrent use, and any number of processes may share
// one table. Create, Update and Delete are single statements whose row lock
// makes check and write one step. Modify runs SELECT ... FOR UPDATE, fn and
// UPDATE in one transaction: it holds the row lock while fn runs, so keep fn
// short. Repo is a resource.GuardedRepository: each write of a Guarded
// view is one transaction that first reads the guard's row FOR SHARE (a
// write to the guard waits for it to end), judges it, then writes; one
// that PostgreSQL ends for a deadlock (two guarded writes locking each
// other's guard) runs again, as nothing of it was committed. Every call
// honours its context.
package pgrepo
