package pgrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agtsdk/agt/resource"
)

// TableName is the name of the one table the repository uses.
const TableName = "agt_resources"

// maxSchemaLen is PostgreSQL's identifier limit (NAMEDATALEN - 1).
const maxSchemaLen = 63

// maxAttempts bounds the attempts of a compare-and-set whose outcome a
// concurrent writer made ambiguous. A statement that may have committed is
// never repeated.
const maxAttempts = 3

// ErrUnknownOutcome reports a write whose statement reached the network but
// whose answer never came back (the connection failed or the context ended
// in between): PostgreSQL may or may not have applied it. The repository
// never retries such a write itself, so a write is never applied twice; read
// the resource again before deciding to repeat it.
var ErrUnknownOutcome = errors.New("pgrepo: the connection failed before PostgreSQL confirmed the write; it may or may not have been applied: read the resource again before retrying")

// Options tunes Open. A nil *Options means all defaults.
type Options struct {
	// Schema is the PostgreSQL schema that holds the table. Empty means the
	// table name is left unqualified, so the connection's search_path picks
	// the schema (normally "public"). A schema that does not exist is created
	// unless SkipCreate is set. At most 63 bytes.
	Schema string

	// SkipCreate makes Open leave the database alone: it neither creates the
	// schema nor the table, and only checks that the table can be read. Set it
	// when the host manages migrations with the DDL in the package
	// documentation. False means Open creates what is missing.
	SkipCreate bool
}

// Repo is a resource.Repository on PostgreSQL. It is safe for concurrent use,
// also by several processes and hosts on one database.
type Repo struct {
	pool  *pgxpool.Pool
	table string // quoted, possibly schema-qualified
	sql   statements

	// schema and skipCreate are Open's options, for the token and task
	// tables.
	schema     string
	skipCreate bool

	// tasks is the task table (see tasks.go).
	tasks taskTable
}

var _ resource.Repository = (*Repo)(nil)

type statements struct {
	get, create, update, current, delete, modifyLock, modifyWrite, list string
	// guardLock reads a guarded write's guard and keeps it from changing
	// until the write's transaction ends; deleteLocked deletes a row the
	// transaction has locked.
	guardLock, deleteLocked string
}

// Open connects a pool to the database named by connString (a URL such as
// "postgres://user@host/db" or keyword/value pairs such as "host=/run/pg
// dbname=agt"; pgxpool's pool_* parameters apply) and creates the schema and
// the table when they are missing. Close the Repo when done.
func Open(ctx context.Context, connString string, opts *Options) (*Repo, error) {
	if opts == nil {
		opts = &Options{}
	}
	if len(opts.Schema) > maxSchemaLen {
		return nil, fmt.Errorf("pgrepo: schema name is %d bytes long; PostgreSQL's limit is %d", len(opts.Schema), maxSchemaLen)
	}
	if strings.IndexByte(opts.Schema, 0) >= 0 {
		return nil, errors.New("pgrepo: schema name contains a NUL byte")
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// pgx's parse errors can quote the password: keep only the gist.
		return nil, errors.New("pgrepo: cannot parse the connection string: want a postgres:// URL or keyword=value pairs")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgrepo: %w", err)
	}
	r := &Repo{pool: pool, schema: opts.Schema, skipCreate: opts.SkipCreate}
	if opts.Schema != "" {
		r.table = pgx.Identifier{opts.Schema, TableName}.Sanitize()
	} else {
		r.table = pgx.Identifier{TableName}.Sanitize()
	}
	r.sql = buildStatements(r.table)
	if opts.SkipCreate {
		err = r.checkTable(ctx)
	} else {
		err = r.createTable(ctx, opts.Schema)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return r, nil
}

// Close closes the pool's connections. Calls made after Close fail.
func (r *Repo) Close() { r.pool.Close() }

// ddl is the table, as documented in doc.go; %s is the quoted table name.
const ddl = `CREATE TABLE IF NOT EXISTS %s (
	kind       text COLLATE "C" NOT NULL,
	ref        text COLLATE "C" NOT NULL,
	revision   bigint NOT NULL CHECK (revision > 0),
	deleted    boolean NOT NULL DEFAULT false,
	data       bytea NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (kind, ref)
)`

// ddlLockKey is the advisory lock that serializes table creation, so hosts
// opening one fresh database at once do not race in CREATE ... IF NOT EXISTS
// (which is not safe against concurrent creators).
const ddlLockKey int64 = 0x616774_7067726570 // "agt" "pgrep"

func (r *Repo) createTable(ctx context.Context, schema string) error {
	return r.createTableDDL(ctx, schema, r.table, ddl)
}

// createTableDDL creates schema and table (quoted) with tableDDL (a format
// taking the table's name) when missing.
func (r *Repo) createTableDDL(ctx context.Context, schema, table, tableDDL string) error {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgrepo: open: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", ddlLockKey); err != nil {
		return fmt.Errorf("pgrepo: open: %w", err)
	}
	if schema != "" {
		// Only create a missing schema: CREATE SCHEMA IF NOT EXISTS needs the
		// CREATE privilege on the database even when the schema exists.
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
			return fmt.Errorf("pgrepo: open: %w", err)
		}
		if !exists {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
				return fmt.Errorf("pgrepo: open: create schema: %w", err)
			}
		}
	}
	// Likewise CREATE TABLE IF NOT EXISTS needs CREATE on the schema even
	// when the table exists: a host whose role may only use it still opens.
	var tableExists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&tableExists); err != nil {
		return fmt.Errorf("pgrepo: open: %w", err)
	}
	if !tableExists {
		if _, err := tx.Exec(ctx, fmt.Sprintf(tableDDL, table)); err != nil {
			return fmt.Errorf("pgrepo: open: create table: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgrepo: open: %w", err)
	}
	return nil
}

// lazyTable is a table of the Repo's that its first use creates (or,
// with Options.SkipCreate, checks): the token and task tables, which a
// host that never needs them never creates. A failure is not remembered,
// so the next call tries again.
type lazyTable struct {
	mu    sync.Mutex
	ready bool
}

// prepare creates table (quoted) with tableDDL (a format taking its
// name) when missing, or with SkipCreate checks that columns can be
// read, once. what names the store in errors.
func (l *lazyTable) prepare(ctx context.Context, r *Repo, what, table, columns, tableDDL string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ready {
		return nil
	}
	if r.skipCreate {
		_, err := r.pool.Exec(ctx, "SELECT "+columns+" FROM "+table+" LIMIT 0")
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "42703" || pgErr.Code == "3F000") {
			return fmt.Errorf("pgrepo: %s: table %s is missing or has other columns: create it with the DDL in the pgrepo documentation, or open without SkipCreate: %w", what, table, err)
		}
		if err != nil {
			return fmt.Errorf("pgrepo: %s: %w", what, err)
		}
	} else if err := r.createTableDDL(ctx, r.schema, table, tableDDL); err != nil {
		return fmt.Errorf("pgrepo: %s: table %s cannot be created (create it with the DDL in the pgrepo documentation): %w", what, table, err)
	}
	l.ready = true
	return nil
}

func (r *Repo) checkTable(ctx context.Context) error {
	_, err := r.pool.Exec(ctx, "SELECT kind, ref, revision, deleted, data, created_at, updated_at FROM "+r.table+" LIMIT 0")
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "42703" || pgErr.Code == "3F000") {
		return fmt.Errorf("pgrepo: open: table %s is missing or has other columns: create it with the DDL in the pgrepo documentation, or open without SkipCreate: %w", r.table, err)
	}
	if err != nil {
		return fmt.Errorf("pgrepo: open: %w", err)
	}
	return nil
}

func buildStatements(t string) statements {
	const cols = "revision, data, created_at, updated_at"
	return statements{
		get: "SELECT " + cols + " FROM " + t + " WHERE kind = $1 AND ref = $2 AND NOT deleted",
		// A tombstone (deleted row) keeps the key's last revision, so a
		// create after a delete continues from it: revisions never repeat.
		create: "INSERT INTO " + t + " AS r (kind, ref, revision, deleted, data, created_at, updated_at)" +
			" VALUES ($1, $2, 1, false, $3, now(), now())" +
			" ON CONFLICT (kind, ref) DO UPDATE SET revision = r.revision + 1, deleted = false," +
			" data = EXCLUDED.data, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at" +
			" WHERE r.deleted RETURNING " + cols,
		// Compare and set in one statement: the row lock taken by UPDATE
		// makes the revision check and the write one atomic step.
		update: "UPDATE " + t + " SET revision = revision + 1, data = $3, updated_at = now()" +
			" WHERE kind = $1 AND ref = $2 AND NOT deleted AND ($4::bigint = 0 OR revision = $4)" +
			" RETURNING " + cols,
		current: "SELECT revision FROM " + t + " WHERE kind = $1 AND ref = $2 AND NOT deleted",
		delete: "UPDATE " + t + " SET deleted = true, data = ''::bytea, updated_at = now()" +
			" WHERE kind = $1 AND ref = $2 AND NOT deleted AND ($3::bigint = 0 OR revision = $3)",
		modifyLock: "SELECT " + cols + " FROM " + t + " WHERE kind = $1 AND ref = $2 AND NOT deleted FOR UPDATE",
		guardLock:  "SELECT " + cols + " FROM " + t + " WHERE kind = $1 AND ref = $2 AND NOT deleted FOR SHARE",
		deleteLocked: "UPDATE " + t + " SET deleted = true, data = ''::bytea, updated_at = now()" +
			" WHERE kind = $1 AND ref = $2",
		modifyWrite: "UPDATE " + t + " SET revision = revision + 1, data = $3, updated_at = now()" +
			" WHERE kind = $1 AND ref = $2 RETURNING " + cols,
		list: "SELECT ref, " + cols + " FROM " + t +
			" WHERE kind = $1 AND NOT deleted AND ($2 = '' OR starts_with(ref, $2 || '/'))" +
			` ORDER BY ref COLLATE "C"`,
	}
}

func checkKey(key resource.Key) error {
	if !key.Kind.Valid() {
		return errors.New("pgrepo: invalid kind: want 1 to 32 lowercase letters, digits, '_' or '-'")
	}
	if !key.Ref.Valid() {
		return errors.New("pgrepo: invalid reference: want name or category/name")
	}
	return nil
}

func checkData(key resource.Key, data json.RawMessage) error {
	if !json.Valid(data) {
		return fmt.Errorf("pgrepo: %s: data is not valid JSON", key)
	}
	return nil
}

// Get returns the stored resource, or resource.ErrNotFound.
func (r *Repo) Get(ctx context.Context, key resource.Key) (resource.Resource, error) {
	if err := checkKey(key); err != nil {
		return resource.Resource{}, err
	}
	var res resource.Resource
	err := r.read(ctx, func() error {
		res = resource.Resource{Kind: key.Kind, Ref: key.Ref}
		return r.pool.QueryRow(ctx, r.sql.get, string(key.Kind), string(key.Ref)).Scan(&res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return resource.Resource{}, fmt.Errorf("pgrepo: get %s: %w", key, resource.ErrNotFound)
	}
	if err != nil {
		return resource.Resource{}, fmt.Errorf("pgrepo: get %s: %w", key, err)
	}
	return normalize(res), nil
}

// Create stores a new resource at revision 1, or at one past the key's last
// revision when it was deleted before; resource.ErrExists if the key is taken.
func (r *Repo) Create(ctx context.Context, key resource.Key, data json.RawMessage) (resource.Resource, error) {
	if err := checkKey(key); err != nil {
		return resource.Resource{}, err
	}
	if err := checkData(key, data); err != nil {
		return resource.Resource{}, err
	}
	res := resource.Resource{Kind: key.Kind, Ref: key.Ref}
	err := r.write(ctx, func(c *pgxpool.Conn) error {
		return c.QueryRow(ctx, r.sql.create, string(key.Kind), string(key.Ref), []byte(data)).Scan(&res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return resource.Resource{}, fmt.Errorf("pgrepo: create %s: %w", key, resource.ErrExists)
	}
	if err != nil {
		return resource.Resource{}, writeError("create", key, err)
	}
	return normalize(res), nil
}

// Update replaces the data of an existing resource if its revision equals
// expected (resource.AnyRevision skips the check).
func (r *Repo) Update(ctx context.Context, key resource.Key, data json.RawMessage, expected int64) (resource.Resource, error) {
	if err := checkKey(key); err != nil {
		return resource.Resource{}, err
	}
	if err := checkData(key, data); err != nil {
		return resource.Resource{}, err
	}
	for attempt := 1; ; attempt++ {
		res := resource.Resource{Kind: key.Kind, Ref: key.Ref}
		err := r.write(ctx, func(c *pgxpool.Conn) error {
			return c.QueryRow(ctx, r.sql.update, string(key.Kind), string(key.Ref), []byte(data), expected).Scan(&res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt)
		})
		if err == nil {
			return normalize(res), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return resource.Resource{}, writeError("update", key, err)
		}
		if err := r.whyNotWritten(ctx, "update", key, expected, attempt); err != nil {
			return resource.Resource{}, err
		}
	}
}

// Delete removes a resource if its revision equals expected
// (resource.AnyRevision skips the check). The key's last revision is kept, so
// a later Create continues after it.
func (r *Repo) Delete(ctx context.Context, key resource.Key, expected int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		var tag pgconn.CommandTag
		err := r.write(ctx, func(c *pgxpool.Conn) error {
			var err error
			tag, err = c.Exec(ctx, r.sql.delete, string(key.Kind), string(key.Ref), expected)
			return err
		})
		if err != nil {
			return writeError("delete", key, err)
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
		if err := r.whyNotWritten(ctx, "delete", key, expected, attempt); err != nil {
			return err
		}
	}
}

// whyNotWritten explains a compare-and-set that matched no row: the key is
// missing (ErrNotFound) or holds another revision (*ConflictError). It
// returns nil when the row now matches, which means a concurrent writer
// changed it between the two statements and the write may be tried again.
func (r *Repo) whyNotWritten(ctx context.Context, op string, key resource.Key, expected int64, attempt int) error {
	var cur int64
	err := r.read(ctx, func() error {
		return r.pool.QueryRow(ctx, r.sql.current, string(key.Kind), string(key.Ref)).Scan(&cur)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("pgrepo: %s %s: %w", op, key, resource.ErrNotFound)
	case err != nil:
		return fmt.Errorf("pgrepo: %s %s: %w", op, key, err)
	case expected == resource.AnyRevision:
		// A blind write matched no row only because the key was missing at
		// that moment: that is the answer, never a conflict.
		return fmt.Errorf("pgrepo: %s %s: %w", op, key, resource.ErrNotFound)
	case cur != expected:
		return &resource.ConflictError{Key: key, Expected: expected, Current: cur}
	case attempt >= maxAttempts:
		// Other writers keep moving the row under us; report the revision seen.
		return &resource.ConflictError{Key: key, Expected: expected, Current: cur}
	}
	return nil
}

// Modify reads the resource with SELECT ... FOR UPDATE inside a transaction,
// calls fn with it while holding the row lock, and writes fn's result in the
// same transaction, so no other write to key lands in between. fn is called
// once per attempt; nil data from fn writes nothing and returns the current
// resource.
func (r *Repo) Modify(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error)) (resource.Resource, error) {
	if err := checkKey(key); err != nil {
		return resource.Resource{}, err
	}
	return r.modify(ctx, key, expected, fn, nil)
}

// modify is Modify; g, when not nil, is judged first in the transaction.
func (r *Repo) modify(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error), g *guard) (resource.Resource, error) {
	for attempt := 1; ; attempt++ {
		res, retry, err := r.modifyOnce(ctx, key, expected, fn, g)
		if retry && attempt < r.connAttempts() && ctx.Err() == nil {
			continue
		}
		return res, err
	}
}

// modifyOnce runs one Modify transaction. retry is true when the connection
// broke before COMMIT was sent, or PostgreSQL ended the transaction for a
// deadlock: it cannot have committed, so running it again cannot double
// the write.
func (r *Repo) modifyOnce(ctx context.Context, key resource.Key, expected int64, fn func(cur resource.Resource) (json.RawMessage, error), g *guard) (res resource.Resource, retry bool, err error) {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return resource.Resource{}, connectionFailed(err), fmt.Errorf("pgrepo: modify %s: nothing was written: %w", key, err)
	}
	// Until Commit is sent the transaction cannot have committed: any error
	// before it is a write that did not happen.
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	cur, retry, err := r.lockRow(ctx, tx, "modify", key, g)
	if err != nil {
		return resource.Resource{}, retry, err
	}
	if expected != resource.AnyRevision && cur.Revision != expected {
		return resource.Resource{}, false, &resource.ConflictError{Key: key, Expected: expected, Current: cur.Revision}
	}
	// fn gets its own copy: bytes handed out are never shared.
	data, err := fn(copyResource(cur))
	if err != nil {
		return resource.Resource{}, false, err
	}
	if data == nil {
		return cur, false, nil
	}
	if err := checkData(key, data); err != nil {
		return resource.Resource{}, false, err
	}
	res = resource.Resource{Kind: key.Kind, Ref: key.Ref}
	err = tx.QueryRow(ctx, r.sql.modifyWrite, string(key.Kind), string(key.Ref), []byte(data)).Scan(&res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt)
	if err != nil {
		return resource.Resource{}, false, fmt.Errorf("pgrepo: modify %s: nothing was written: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return resource.Resource{}, false, fmt.Errorf("pgrepo: modify %s: nothing was written: %w", key, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return resource.Resource{}, false, writeError("modify", key, err)
	}
	return normalize(res), false, nil
}

// List returns the resources of one kind sorted by Ref (byte order); a
// non-empty category keeps only references in that category.
func (r *Repo) List(ctx context.Context, kind resource.Kind, category string) ([]resource.Resource, error) {
	if !kind.Valid() {
		return nil, errors.New("pgrepo: invalid kind: want 1 to 32 lowercase letters, digits, '_' or '-'")
	}
	if category != "" && (strings.IndexByte(category, '/') >= 0 || !resource.Ref(category).Valid()) {
		return nil, errors.New("pgrepo: invalid category: want one reference segment")
	}
	var out []resource.Resource
	err := r.read(ctx, func() error {
		out = out[:0]
		rows, err := r.pool.Query(ctx, r.sql.list, string(kind), category)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			res := resource.Resource{Kind: kind}
			if err := rows.Scan(&res.Ref, &res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt); err != nil {
				return err
			}
			out = append(out, normalize(res))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("pgrepo: list %s: %w", kind, err)
	}
	return out, nil
}

// read runs an idempotent query again while the connection fails and the
// context is live.
func (r *Repo) read(ctx context.Context, query func() error) error {
	var err error
	for attempt := 1; attempt <= r.connAttempts(); attempt++ {
		err = query()
		if err == nil || errors.Is(err, pgx.ErrNoRows) || ctx.Err() != nil || !connectionFailed(err) {
			return err
		}
	}
	return err
}

// connAttempts bounds the attempts of work that may be repeated after a
// broken connection. After a server restart every idle pooled connection may
// be dead; the pool drops each one that fails, so one attempt more than the
// pool's size reaches a fresh connection.
func (r *Repo) connAttempts() int { return int(r.pool.Config().MaxConns) + 1 }

// write runs one statement on a pooled connection, once: a statement that
// may have reached the server is never sent again, so a write is never
// applied twice. (pgconn.SafeToRetry is not enough to decide that: pgx
// v5.12.0 reports a reply lost after a simple-protocol statement was sent as
// "conn closed", which claims to be safe to retry.)
func (r *Repo) write(ctx context.Context, stmt func(c *pgxpool.Conn) error) error {
	if err := ctx.Err(); err != nil {
		return notSentError{err}
	}
	c, err := r.pool.Acquire(ctx)
	if err != nil {
		// No connection, so no statement was sent.
		return notSentError{err}
	}
	defer c.Release()
	return stmt(c)
}

// notSentError marks a failure that happened before any statement was sent.
type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

// connectionFailed reports an error that is not PostgreSQL's answer to the
// statement: the connection broke or could not be made.
func connectionFailed(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08 is connection exception; 57P01-57P03 are shutdowns.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	return !errors.Is(err, pgx.ErrNoRows)
}

// writeError wraps the failure of a write that was not confirmed. Nothing
// was written when the statement was never sent (notSentError), or when the
// server answered it with an ERROR (the statement or transaction was rolled
// back and the connection lives on). Anything else, a broken connection or a
// FATAL that ended the session, may have come after the commit, and is
// reported as ErrUnknownOutcome.
func writeError(op string, key resource.Key, err error) error {
	var notSent notSentError
	var pgErr *pgconn.PgError
	if errors.As(err, &notSent) || errors.Is(err, pgx.ErrTxCommitRollback) ||
		errors.As(err, &pgErr) && severity(pgErr) == "ERROR" {
		return fmt.Errorf("pgrepo: %s %s: nothing was written: %w", op, key, err)
	}
	return &unknownOutcomeError{op: op, key: key, err: err}
}

// unknownOutcomeError is a write that may or may not have been applied.
type unknownOutcomeError struct {
	op  string
	key resource.Key
	err error
}

func (e *unknownOutcomeError) Error() string {
	return fmt.Sprintf("pgrepo: %s %s: the connection failed before PostgreSQL confirmed the write; it may or may not have been applied: read the resource again before retrying: %v", e.op, e.key, e.err)
}

// Unwrap gives errors.Is and errors.As both ErrUnknownOutcome and the cause.
func (e *unknownOutcomeError) Unwrap() []error { return []error{ErrUnknownOutcome, e.err} }

// severity is the error's severity in English whatever lc_messages says.
func severity(e *pgconn.PgError) string {
	if e.SeverityUnlocalized != "" {
		return e.SeverityUnlocalized
	}
	return e.Severity
}

// normalize puts the stored times in UTC, whatever the driver's time zone, so
// the same resource always compares equal.
func normalize(res resource.Resource) resource.Resource {
	res.CreatedAt = res.CreatedAt.UTC()
	res.UpdatedAt = res.UpdatedAt.UTC()
	return res
}

func copyResource(res resource.Resource) resource.Resource {
	if res.Data != nil {
		res.Data = append(json.RawMessage(nil), res.Data...)
	}
	return res
}
