// Package boltrepo is the default resource.Repository: one bbolt file
// (go.etcd.io/bbolt) holding every MCP and agent resource.
//
//	repo, err := boltrepo.Open(filepath.Join(dir, "agt.db"), nil)
//	if err != nil {
//		return err
//	}
//	defer repo.Close()
//	svc := resource.NewService(repo, nil)
//	res, err := svc.Read(ctx, resource.Direct(), resource.Key{Kind: resource.KindMCP, Ref: "tools/files"})
//
// # Revisions
//
// A new key starts at revision 1; every write adds one. Delete keeps the
// key's last revision (a small high-water record), so a resource created
// again under the same key continues above it and a form saved against the
// deleted resource can never match the new one.
//
// # Durability
//
// Every write is one bbolt read-write transaction, and bbolt fsyncs the file
// on commit: once Create, Update, Modify or Delete has returned nil, the
// write survives a process crash, an OS crash and a power loss (on a disk
// that honours fsync). A write that had not returned is either fully there
// or not there at all.
// Options.NoSync drops the fsync (for tests): a process crash still loses
// nothing, an OS crash may.
//
// # Processes
//
// By default the Repo holds the file open and locked (flock) from Open to
// Close, and a second process opening the file waits Options.LockTimeout
// (DefaultLockTimeout when zero; bbolt's own default waits forever) and then
// fails with an error saying the file is locked. With Options.Shared the
// file is opened and locked only for the span of each operation, so a
// running host and the agt CLI can share one file. Each operation then
// costs an open, a file lock, a memory map and a close: a read about 25
// times an exclusive read, a write about 1.5 times an exclusive write
// (BenchmarkSharedVsExclusive). Reads share the lock; writes take it alone,
// and a process waiting for it retries every few milliseconds until
// LockTimeout. A shared Repo notices a file removed between operations:
// reads fail, and the next write starts a new, empty store there (its
// revisions start again at 1). Use an exclusive Repo in a host that owns its file, a shared
// one when a CLI must work beside a running host, and PostgreSQL (package
// pgrepo) when hosts on several machines share registrations.
//
// # Concurrency
//
// A Repo is safe for concurrent use. Reads run in parallel; writes run one
// at a time (bbolt has a single writer), so compare-and-set and Modify never
// lose an update. The fn given to Modify runs inside the write transaction:
// it must be quick and must not call the Repo. Bytes handed in are copied
// into the file; bytes handed out are copies made before the transaction
// ends.
//
// # Errors
//
// resource.ErrNotFound, resource.ErrExists and *resource.ConflictError as
// the Repository interface says; ErrClosed after Close; an invalid kind or
// reference, or data that is not JSON, is refused before the file is
// touched; a bbolt file that holds no resources bucket (another program's
// file) is an error, never a panic. Anything else is a file or bbolt
// failure.
package boltrepo
