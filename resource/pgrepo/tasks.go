package pgrepo

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/internal/taskrules"
)

var _ resource.TaskStore = (*Repo)(nil)

// TaskTableName is the table of the Repo's task handles, beside TableName.
const TaskTableName = "agt_tasks"

// taskIndexName is the index of the task table by expiry, in its schema.
const taskIndexName = "agt_tasks_expires_at"

// taskDDL is the task table and its index, as documented in doc.go: %[1]s
// is the table's quoted name, %[2]s the index's. The CHECKs repeat the
// bounds of resource.CheckTask, so the database itself refuses more.
const taskDDL = `CREATE TABLE IF NOT EXISTS %[1]s (
	run_id     text COLLATE "C" NOT NULL CHECK (octet_length(run_id) BETWEEN 1 AND 256),
	call_id    text COLLATE "C" NOT NULL CHECK (octet_length(call_id) BETWEEN 1 AND 256),
	server     text NOT NULL CHECK (octet_length(server) BETWEEN 1 AND 128),
	revision   bigint NOT NULL CHECK (revision > 0),
	tool       text NOT NULL CHECK (octet_length(tool) BETWEEN 1 AND 256),
	task_id    text NOT NULL CHECK (octet_length(task_id) BETWEEN 1 AND 1024),
	protocol   text NOT NULL CHECK (octet_length(protocol) BETWEEN 1 AND 64),
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
	PRIMARY KEY (run_id, call_id)
);
CREATE INDEX IF NOT EXISTS %[2]s ON %[1]s (expires_at)`

// taskColumns are the columns a SkipCreate check reads.
const taskColumns = "run_id, call_id, server, revision, tool, task_id, protocol, created_at, expires_at"

// taskLockClass is the first key of the advisory lock that serializes the
// saves of one run (the second is hashtext of the run ID): the count of
// the run's handles and the write are then one step, across hosts.
const taskLockClass int32 = 0x61677474 // "agtt"

// maxTaskSweep bounds the expired handles of other runs one SaveTask
// deletes, so a save after a long pause stays short; fixed.
const maxTaskSweep = 256

// maxTaskAttempts bounds the transactions of one SaveTask: an attempt is
// repeated only when its connection broke before COMMIT was sent.
const maxTaskAttempts = 3

// taskTable is the Repo's task table: its statements and whether it was
// created or checked.
type taskTable struct {
	once  sync.Once
	table string
	ddl   string // taskDDL for the table, as createTableDDL takes it
	sql   struct{ sweep, lock, dropRun, count, upsert, list, delete string }
	ready lazyTable
}

// taskSQL returns the task table, created or checked on first use: a
// host that never runs tasks never creates it.
func (r *Repo) taskSQL(ctx context.Context) (*taskTable, error) {
	tt := &r.tasks
	tt.once.Do(func() {
		if r.schema != "" {
			tt.table = pgx.Identifier{r.schema, TaskTableName}.Sanitize()
		} else {
			tt.table = pgx.Identifier{TaskTableName}.Sanitize()
		}
		t := tt.table
		tt.ddl = fmt.Sprintf(taskDDL, "%[1]s", pgx.Identifier{taskIndexName}.Sanitize())
		tt.sql.sweep = "DELETE FROM " + t + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM " + t +
			" WHERE expires_at <= $1 ORDER BY expires_at LIMIT " + strconv.Itoa(maxTaskSweep) + " FOR UPDATE SKIP LOCKED))"
		tt.sql.lock = "SELECT pg_advisory_xact_lock(" + strconv.Itoa(int(taskLockClass)) + ", hashtext($1))"
		tt.sql.dropRun = "DELETE FROM " + t + " WHERE run_id = $1 AND expires_at <= $2"
		tt.sql.count = "SELECT count(*) FROM " + t + " WHERE run_id = $1 AND call_id <> $2"
		tt.sql.upsert = "INSERT INTO " + t + " (" + taskColumns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)" +
			" ON CONFLICT (run_id, call_id) DO UPDATE SET server = EXCLUDED.server, revision = EXCLUDED.revision," +
			" tool = EXCLUDED.tool, task_id = EXCLUDED.task_id, protocol = EXCLUDED.protocol," +
			" created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at"
		tt.sql.list = "SELECT call_id, server, revision, tool, task_id, protocol, created_at, expires_at FROM " + t +
			" WHERE run_id = $1 AND expires_at > $2 ORDER BY call_id LIMIT " + strconv.Itoa(taskrules.MaxRunTasks+1)
		tt.sql.delete = "DELETE FROM " + t + " WHERE run_id = $1 AND call_id = $2"
	})
	if err := tt.ready.prepare(ctx, r, "task store", tt.table, taskColumns, tt.ddl); err != nil {
		return nil, err
	}
	return tt, nil
}

// taskKey names a task handle in the errors of a write: the kind "task",
// the run and call IDs quoted.
func taskKey(run, call string) resource.Key {
	return resource.Key{Kind: "task", Ref: resource.Ref(strconv.Quote(run) + " " + strconv.Quote(call))}
}

// SaveTask stores h in one transaction that takes the run's advisory
// lock, deletes the run's expired handles, counts its others against
// taskrules.MaxRunTasks and inserts or replaces the row. Before it, one
// statement deletes up to 256 expired handles of any run (skipping rows
// another transaction holds). A transaction whose connection broke before
// COMMIT runs again, at most 3 times in all; one whose COMMIT went
// unconfirmed wraps ErrUnknownOutcome (saving the same handle again is
// harmless).
func (r *Repo) SaveTask(ctx context.Context, h resource.TaskHandle) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := resource.CheckTask(h); err != nil {
		return err
	}
	tt, err := r.taskSQL(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := r.write(ctx, func(c *pgxpool.Conn) error {
		_, err := c.Exec(ctx, tt.sql.sweep, now)
		return err
	}); err != nil {
		// Nothing of h was sent; the deletion of expired handles may or
		// may not have happened, which changes nothing live.
		return fmt.Errorf("pgrepo: save %s: nothing was written (the deletion of expired handles before it failed): %w", taskKey(h.Run, h.Call), err)
	}
	for attempt := 1; ; attempt++ {
		retry, err := r.saveTaskOnce(ctx, tt, h, now)
		if !retry || ctx.Err() != nil {
			return err
		}
		if attempt >= maxTaskAttempts {
			return fmt.Errorf("pgrepo: save task: nothing was written after %d attempts: %w", attempt, err)
		}
	}
}

// saveTaskOnce runs one SaveTask transaction. retry is true when it
// cannot have committed and may run again.
func (r *Repo) saveTaskOnce(ctx context.Context, tt *taskTable, h resource.TaskHandle, now time.Time) (retry bool, err error) {
	key := taskKey(h.Run, h.Call)
	failed := func(err error) (bool, error) {
		return retryable(err), fmt.Errorf("pgrepo: save %s: nothing was written: %w", key, err)
	}
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return failed(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, tt.sql.lock, h.Run); err != nil {
		return failed(err)
	}
	if _, err := tx.Exec(ctx, tt.sql.dropRun, h.Run, now); err != nil {
		return failed(err)
	}
	var others int64
	if err := tx.QueryRow(ctx, tt.sql.count, h.Run, h.Call).Scan(&others); err != nil {
		return failed(err)
	}
	if others >= taskrules.MaxRunTasks {
		return false, taskrules.Full()
	}
	if _, err := tx.Exec(ctx, tt.sql.upsert, h.Run, h.Call, string(h.Server), h.Revision, h.Tool, h.TaskID,
		h.Protocol, taskrules.Time(h.Created), taskrules.Time(h.Expires)); err != nil {
		return failed(err)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("pgrepo: save %s: nothing was written: %w", key, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, writeError("save", key, err)
	}
	return false, nil
}

// Tasks returns the run's handles that have not expired, sorted by call,
// in one statement that reads at most taskrules.MaxRunTasks+1 rows: more
// live handles than the bound, or a row resource.CheckTask refuses, was
// not written by this package and is an error.
func (r *Repo) Tasks(ctx context.Context, run string) ([]resource.TaskHandle, error) {
	if err := taskrules.Run(ctx, run); err != nil {
		return nil, err
	}
	tt, err := r.taskSQL(ctx)
	if err != nil {
		return nil, err
	}
	var out []resource.TaskHandle
	err = r.read(ctx, func() error {
		out = []resource.TaskHandle{}
		rows, err := r.pool.Query(ctx, tt.sql.list, run, time.Now())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			h := resource.TaskHandle{Run: run}
			var server string
			if err := rows.Scan(&h.Call, &server, &h.Revision, &h.Tool, &h.TaskID, &h.Protocol, &h.Created, &h.Expires); err != nil {
				return err
			}
			h.Server, h.Created, h.Expires = resource.Ref(server), taskrules.Time(h.Created), taskrules.Time(h.Expires)
			out = append(out, h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("pgrepo: read the task handles of a run: %w", err)
	}
	if len(out) > taskrules.MaxRunTasks {
		return nil, taskrules.Corrupt("pgrepo: "+tt.table, "a run holds more than MaxRunTasks task handles")
	}
	for _, h := range out {
		if resource.CheckTask(h) != nil {
			return nil, taskrules.Corrupt("pgrepo: "+tt.table, "a stored task handle breaks the rules of resource.CheckTask")
		}
	}
	return out, nil
}

// DeleteTask removes the handle of (run, call) in one statement; none
// there is not an error.
func (r *Repo) DeleteTask(ctx context.Context, run, call string) error {
	if err := taskrules.Key(ctx, run, call); err != nil {
		return err
	}
	tt, err := r.taskSQL(ctx)
	if err != nil {
		return err
	}
	err = r.write(ctx, func(c *pgxpool.Conn) error {
		_, err := c.Exec(ctx, tt.sql.delete, run, call)
		return err
	})
	if err != nil {
		return writeError("delete", taskKey(run, call), err)
	}
	return nil
}
