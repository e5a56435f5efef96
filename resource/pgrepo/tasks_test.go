package pgrepo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/internal/taskrules"
	"github.com/agtsdk/agt/resource/pgrepo"
	"github.com/agtsdk/agt/resource/taskstoretest"
)

// Issue 26 item 3: the Repo keeps task handles in a table of its own.
func TestTaskStoreConformance(t *testing.T) {
	testConnString(t)
	taskstoretest.Run(t, func(t *testing.T) resource.TaskStore {
		return openRepo(t)
	})
}

func taskHandle(run, call string) resource.TaskHandle {
	now := time.Now()
	return resource.TaskHandle{Run: run, Call: call, Server: "tools/research", Revision: 2, Tool: "research",
		TaskID: "task-" + call, Protocol: "2026-07-28", Created: now, Expires: now.Add(time.Hour)}
}

func tasksTable(schema string) string {
	return pgx.Identifier{schema, pgrepo.TaskTableName}.Sanitize()
}

// countRows counts the task rows of the schema's table.
func countRows(t *testing.T, schema, where string) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, testConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+tasksTable(schema)+" WHERE "+where).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 26 item 3: a host that stops and opens the database again (a new
// Repo, a new pool) finds the handles it saved, exactly.
func TestTasksSurviveReopen(t *testing.T) {
	t.Parallel()
	conn, schema := testConnString(t), newSchema(t)
	ctx := context.Background()
	first, err := pgrepo.Open(ctx, conn, &pgrepo.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	a, b := taskHandle("run", "a"), taskHandle("run", "b")
	for _, h := range []resource.TaskHandle{b, a} {
		if err := first.SaveTask(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	first.Close()
	got, err := openRepoAt(t, conn, schema).Tasks(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	want := []resource.TaskHandle{a, b}
	for i := range want {
		want[i].Created = time.UnixMilli(want[i].Created.UnixMilli()).UTC()
		want[i].Expires = time.UnixMilli(want[i].Expires.UnixMilli()).UTC()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Tasks after reopen mismatch (-want +got):\n%s", diff)
	}
}

// Two Repos (two pools, as two hosts have) on one schema race to fill
// one run: the advisory lock makes count and write one step across them,
// so exactly the room left is taken.
func TestTasksTwoReposAtBound(t *testing.T) {
	t.Parallel()
	conn, schema := testConnString(t), newSchema(t)
	repos := []*pgrepo.Repo{openRepoAt(t, conn, schema), openRepoAt(t, conn, schema)}
	ctx := context.Background()
	const room = 4
	if err := repos[0].SaveTask(ctx, taskHandle("full", "first")); err != nil {
		t.Fatal(err)
	}
	adminExec(t, "INSERT INTO "+tasksTable(schema)+" (run_id, call_id, server, revision, tool, task_id, protocol, created_at, expires_at)"+
		" SELECT 'full', 'call-' || i, 's', 1, 't', 'x', 'p', now(), now() + interval '1 hour' FROM generate_series(1, $1) AS i",
		taskrules.MaxRunTasks-room-1)
	var wg sync.WaitGroup
	errs := make(chan error, 4*room)
	for g := range 4 * room {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- repos[g%2].SaveTask(ctx, taskHandle("full", fmt.Sprintf("new-%02d", g)))
		}()
	}
	wg.Wait()
	close(errs)
	saved := 0
	for err := range errs {
		switch {
		case err == nil:
			saved++
		case !errors.Is(err, resource.ErrLimit):
			t.Fatal(err)
		}
	}
	if n := countRows(t, schema, "run_id = 'full'"); saved != room || n != taskrules.MaxRunTasks {
		t.Fatalf("%d saves succeeded, the run holds %d rows; want %d and %d", saved, n, room, taskrules.MaxRunTasks)
	}
}

// Issue 26 item 3 (dropped after the TTL): a SaveTask deletes up to 256
// expired handles of runs no one saves to again; the live ones stay.
func TestTasksSweepOtherRuns(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	repo := openRepoAt(t, testConnString(t), schema)
	ctx := context.Background()
	if err := repo.SaveTask(ctx, taskHandle("live", "a")); err != nil {
		t.Fatal(err)
	}
	adminExec(t, "INSERT INTO "+tasksTable(schema)+" (run_id, call_id, server, revision, tool, task_id, protocol, created_at, expires_at)"+
		" SELECT 'gone-' || i, 'call', 's', 1, 't', 'x', 'p', now() - interval '2 hours', now() - interval '1 hour' FROM generate_series(1, 300) AS i")
	for i, want := range []int{300 - 256, 0} {
		if err := repo.SaveTask(ctx, taskHandle("live", fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, schema, "run_id LIKE 'gone-%'"); n != want {
			t.Fatalf("after save %d: %d expired rows of other runs, want %d", i+1, n, want)
		}
	}
	if n := countRows(t, schema, "run_id = 'live'"); n != 3 {
		t.Fatalf("the live run holds %d rows, want 3", n)
	}
}

// The table itself refuses what resource.CheckTask refuses by size, and
// a row that breaks CheckTask's other rules, or a run of more than
// MaxRunTasks rows, written past the store, is an error for Tasks that
// repeats nothing stored.
func TestTasksHostileRows(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	repo := openRepoAt(t, testConnString(t), schema)
	ctx := context.Background()
	if _, err := repo.Tasks(ctx, "run"); err != nil {
		t.Fatal(err) // creates the table
	}
	insert := "INSERT INTO " + tasksTable(schema) + " (run_id, call_id, server, revision, tool, task_id, protocol, created_at, expires_at)"
	c, err := pgx.Connect(ctx, testConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, insert+" VALUES ('run', 'c', 's', 1, 't', $1, 'p', now(), now() + interval '1 hour')", strings.Repeat("x", 1025))
	if err == nil || !strings.Contains(err.Error(), "check constraint") {
		t.Fatalf("insert of a 1025-byte task id err = %v, want the check constraint", err)
	}
	const secret = "SECRET-STORED-TASK-ID"
	adminExec(t, insert+" VALUES ('bad', 'c', 'Not/A/Ref', 1, 't', $1, 'p', now(), now() + interval '1 hour')", secret)
	if got, err := repo.Tasks(ctx, "bad"); err == nil || !strings.Contains(err.Error(), "task handle") || strings.Contains(err.Error(), secret) {
		t.Fatalf("Tasks of a hostile row = %v, %v; want an error about a stored task handle, without its value", got, err)
	}
	adminExec(t, insert+" SELECT 'many', 'call-' || i, 's', 1, 't', 'x', 'p', now(), now() + interval '1 hour' FROM generate_series(1, $1) AS i", taskrules.MaxRunTasks+1)
	if got, err := repo.Tasks(ctx, "many"); err == nil || !strings.Contains(err.Error(), "MaxRunTasks") {
		t.Fatalf("Tasks of %d rows = %d handles, %v; want an error naming MaxRunTasks", taskrules.MaxRunTasks+1, len(got), err)
	}
	// The hostile row can be deleted, and the run works again.
	if err := repo.DeleteTask(ctx, "bad", "c"); err != nil {
		t.Fatal(err)
	}
	if got, err := repo.Tasks(ctx, "bad"); err != nil || len(got) != 0 {
		t.Fatalf("Tasks after the delete = %v, %v", got, err)
	}
}

// A Repo whose host never runs tasks never creates the task table; with
// SkipCreate a missing table is an error naming SkipCreate, and the same
// Repo works once the table exists.
func TestTaskTableLazyAndSkipCreate(t *testing.T) {
	t.Parallel()
	conn, schema := testConnString(t), newSchema(t)
	creating := openRepoAt(t, conn, schema)
	skipping, err := pgrepo.Open(context.Background(), conn, &pgrepo.Options{Schema: schema, SkipCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(skipping.Close)
	ctx := context.Background()
	exists := func() bool {
		var ok bool
		c, err := pgx.Connect(ctx, conn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", tasksTable(schema)).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if exists() {
		t.Fatal("the task table exists before any task call")
	}
	if err := skipping.SaveTask(ctx, taskHandle("run", "call")); err == nil || !strings.Contains(err.Error(), "SkipCreate") {
		t.Fatalf("SaveTask without the table err = %v, want one naming SkipCreate", err)
	}
	if _, err := skipping.Tasks(ctx, "run"); err == nil || !strings.Contains(err.Error(), "SkipCreate") {
		t.Fatalf("Tasks without the table err = %v, want one naming SkipCreate", err)
	}
	if err := creating.DeleteTask(ctx, "run", "call"); err != nil {
		t.Fatal(err)
	}
	if !exists() {
		t.Fatal("the task table is missing after the first task call")
	}
	if err := skipping.SaveTask(ctx, taskHandle("run", "call")); err != nil {
		t.Fatalf("SaveTask once the table exists: %v", err)
	}
}
