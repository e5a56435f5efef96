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
// ends. Repo is a resource.GuardedRepository: the writes of a Guarded
// view read and judge the guard in their own write transaction, so the
// guard cannot change between the check and the commit.
//
// # Damaged files
//
// The file is hostile input: a truncated copy, a failing disk or another
// program can damage it, and bbolt (v1.5.0) trusts what it reads: it
// faults on memory past the end of its mapping (a SIGSEGV or SIGBUS that
// no recover can stop), recurses through a page that lists itself as its
// own child until the stack overflows (fatal too), or panics. So before
// bbolt maps the file, under the file lock, the Repo checks what bbolt
// trusts blindly:
//
//   - both meta pages: bbolt's magic, format version and checksum; a page
//     size from 1 KiB to 16 MiB;
//   - the meta page bbolt will use: the file holds every page it counts,
//     and its root page lies inside them;
//   - that meta page's freelist: inside the file, its length fitting its
//     pages;
//   - its page tree: every branch, leaf and sub-bucket page inside the
//     file, of the right type, identifying as itself, reached once (a tree,
//     no cycle), and not on the freelist (else the next write would
//     overwrite it).
//
// The meta checks read the two meta pages, at every open (once per Open
// in exclusive mode, once per operation in shared mode). The freelist and
// tree checks read every page in use: an Open of a 4 MB store of 10,000
// resources takes about 1.5 ms instead of 0.07 ms (BenchmarkOpenLarge). A
// shared Repo skips them when the file is the one it last checked or wrote
// (same file, size, modification time and transaction), so only a write of
// another process makes its next operation check them again. When exactly
// one meta page is damaged, bbolt uses the other and so does the Repo, if
// that one passes: the file opens as it was at that meta page's write,
// which is the last write or the one before.
//
// Damage the checks cannot see (inside a page's keys and values) is found
// by bbolt while it reads: every call recovers bbolt's panics, and its
// memory faults (runtime/debug.SetPanicOnFault), and returns an error. In
// exclusive mode the Repo then keeps that error: every later call returns
// it without touching the file, and Close releases the file even when the
// panic left bbolt's own locks held. In shared mode each operation opens
// the file anew, so a file damaged while the host runs gives an error on
// the next call, and a restored file works again. The memory map of a file
// on which bbolt failed while opening, or failed leaving its locks held,
// stays until the process exits (bbolt offers no way to release it then).
// An exclusive Repo checks the tree once, at Open: damage written into the
// file while it is open is found only as bbolt reads it.
//
// # Errors
//
// resource.ErrNotFound, resource.ErrExists and *resource.ConflictError as
// the Repository interface says; ErrClosed after Close; an invalid kind or
// reference, or data that is not JSON, is refused before the file is
// touched; a bbolt file that holds no resources bucket (another program's
// file) is an error, never a panic. A damaged file is an error that
// matches ErrDamaged (errors.Is), naming the file and what is wrong with
// its layout (never what it holds) and saying what to do: restore it from
// a backup, or examine it with `bbolt check`. A file none of whose meta
// pages has bbolt's magic is not a bbolt file: bbolt's errors.ErrInvalid;
// one whose meta pages are intact but of another bbolt format, bbolt's
// errors.ErrVersionMismatch. Anything else is a file or bbolt failure.
//
// # Token store
//
// OpenTokenStore opens a resource.TokenStore on a bbolt file of its own
// (agt.Open uses "tokens.db" beside the store file): OAuth credentials
// never share a file with the documents. The file is created with mode
// 0600; a file that group or others may read or write is refused, at open
// and at every operation (on Unix systems; the error names the mode and
// says to restrict it to its owner). It always works in the shared mode
// above, opening the file for each operation, so a running host and the
// agt CLI (a login) use it at once; every Update is one write transaction
// under the file's exclusive lock, so refreshes by several Runs or
// processes never lose a write. A resource store's file is refused as a
// token store and the other way round. The damage checks and the
// recovery of bbolt's failures are the same as a Repo's. A stored value
// larger than resource.MaxTokenBytes is refused on read.
//
// # Task handles
//
// A Repo is a resource.TaskStore: the handles of the MCP tasks of Runs
// live in the resource store's own file, in two buckets of their own
// (tasks, one sub-bucket per run holding a record per call, and
// taskexpiry, the handles by expiry time), created by Open in a file
// written before them, without a change of format. SaveTask is one write
// transaction: it deletes up to 256 expired handles of any run (earliest
// first, through taskexpiry) and every expired handle of its run, counts
// the run's others against resource.TaskStore's bound of 1024 and writes the record;
// Tasks is one read transaction, and skips expired handles rather than
// delete them. Both modes (exclusive, shared) keep them, and they survive
// a reopen as documents do. A stored record is read as hostile input: one
// over 16 KiB, of another version, or whose fields resource.CheckTask
// refuses, a run bucket of more than 1024 entries (resource.TaskStore's
// bound), or a damaged index entry is an error naming the file, never a
// panic nor what it holds; DeleteTask removes a damaged record.
//
// # Limits
//
//   - Options.LockTimeout: how long an open waits for the file lock another
//     process holds; DefaultLockTimeout (5 s) when zero.
//   - Page size: 1 KiB to 16 MiB, the range bbolt searches; a file of
//     another page size is damaged. Fixed.
package boltrepo
