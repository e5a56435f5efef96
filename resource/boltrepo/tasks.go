package boltrepo

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/internal/taskrules"
)

// Compile-time check: Repo keeps task handles.
var _ resource.TaskStore = (*Repo)(nil)

// Task handle layout, in the resource store's file:
//
//	tasks/<run>/<call>                     -> task record (see encodeTask)
//	taskexpiry/<expires><run> 0x00 <call>  -> empty: the handles by expiry
//
// <expires> is the handle's Expires in Unix milliseconds, 8 bytes
// big-endian, so a cursor meets the earliest first. A run ID holds no NUL
// byte (resource.CheckTask), so 0x00 ends it. Both buckets are created by
// Open (and by every write in shared mode): a file written before them
// gets them at its next open, and keeps its format.
var (
	bucketTasks      = []byte("tasks")
	bucketTaskExpiry = []byte("taskexpiry")
)

// Bounds of what a task operation reads and deletes; fixed.
const (
	// maxTaskRecordBytes bounds one stored record: a valid one is at most
	// about 8 KiB (a 1 KiB task id whose every byte JSON escapes as \u00XX).
	maxTaskRecordBytes = 16 << 10
	// maxTaskSweep bounds the expired handles of other runs one SaveTask
	// deletes, so a save after a long pause stays short; each save takes
	// up to that many more.
	maxTaskSweep = 256
)

// taskRecord is the JSON part of a stored handle: the fields its key and
// header do not hold.
type taskRecord struct {
	Server   string `json:"server"`
	Revision int64  `json:"revision"`
	Tool     string `json:"tool"`
	TaskID   string `json:"task_id"`
	Protocol string `json:"protocol"`
	Created  int64  `json:"created_ms"`
}

// Record encoding: 1 byte version (1), 8 bytes big-endian Expires in Unix
// milliseconds (read alone to count and expire handles), then taskRecord
// as JSON.
const (
	taskRecordVersion    = 1
	taskRecordHeaderSize = 1 + 8
)

func encodeTask(h resource.TaskHandle) ([]byte, error) {
	data, err := json.Marshal(taskRecord{Server: string(h.Server), Revision: h.Revision, Tool: h.Tool,
		TaskID: h.TaskID, Protocol: h.Protocol, Created: h.Created.UnixMilli()})
	if err != nil {
		return nil, err
	}
	buf := make([]byte, taskRecordHeaderSize, taskRecordHeaderSize+len(data))
	buf[0] = taskRecordVersion
	binary.BigEndian.PutUint64(buf[1:], uint64(h.Expires.UnixMilli()))
	return append(buf, data...), nil
}

// taskExpires reads a record's Expires; ok is false for a record this
// package did not write.
func taskExpires(v []byte) (ms int64, ok bool) {
	if len(v) < taskRecordHeaderSize || len(v) > maxTaskRecordBytes || v[0] != taskRecordVersion {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v[1:])), true
}

// decodeTask copies a stored record out of the transaction. A record
// this package could not have written is an error naming the store, never
// its content.
func (r *Repo) decodeTask(run, call string, v []byte) (resource.TaskHandle, error) {
	ms, ok := taskExpires(v)
	var rec taskRecord
	if ok {
		ok = json.Unmarshal(v[taskRecordHeaderSize:], &rec) == nil
	}
	h := resource.TaskHandle{Run: run, Call: call, Server: resource.Ref(rec.Server), Revision: rec.Revision,
		Tool: rec.Tool, TaskID: rec.TaskID, Protocol: rec.Protocol,
		Created: time.UnixMilli(rec.Created).UTC(), Expires: time.UnixMilli(ms).UTC()}
	if !ok || resource.CheckTask(h) != nil {
		return resource.TaskHandle{}, r.damagedTask("a stored task handle is damaged or of an unknown version")
	}
	return h, nil
}

func (r *Repo) damagedTask(what string) error {
	return taskrules.Corrupt("boltrepo: "+r.path, what)
}

// taskExpiryKey is the index key of a handle.
func taskExpiryKey(ms int64, run, call string) []byte {
	k := make([]byte, 8, 8+len(run)+1+len(call))
	binary.BigEndian.PutUint64(k, uint64(ms))
	k = append(k, run...)
	k = append(k, 0)
	return append(k, call...)
}

// taskBuckets returns the two task buckets; a file without them is not a
// resource store of this package.
func (r *Repo) taskBuckets(tx *bolt.Tx) (tasks, expiry *bolt.Bucket, err error) {
	tasks, expiry = tx.Bucket(bucketTasks), tx.Bucket(bucketTaskExpiry)
	if tasks == nil || expiry == nil {
		return nil, nil, fmt.Errorf("boltrepo: %s holds no task buckets: it is not an agt store (was the file replaced?)", r.path)
	}
	return tasks, expiry, nil
}

// SaveTask stores h under (h.Run, h.Call) in one write transaction,
// which first deletes the run's expired handles and up to 256 expired
// handles of other runs, then counts the run's others against
// taskrules.MaxRunTasks.
func (r *Repo) SaveTask(ctx context.Context, h resource.TaskHandle) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := resource.CheckTask(h); err != nil {
		return err
	}
	rec, err := encodeTask(h)
	if err != nil {
		return err
	}
	exp := h.Expires.UnixMilli()
	return r.withDB(ctx, true, func(tx *bolt.Tx) error {
		tb, xb, err := r.taskBuckets(tx)
		if err != nil {
			return err
		}
		now := time.Now()
		if err := r.sweepTasks(tb, xb, now); err != nil {
			return err
		}
		rb, err := tb.CreateBucketIfNotExists([]byte(h.Run))
		if err != nil {
			return fmt.Errorf("boltrepo: %s: the task bucket of a run: %w", r.path, err)
		}
		others, err := r.dropExpired(rb, xb, h.Run, h.Call, now)
		if err != nil {
			return err
		}
		if others >= taskrules.MaxRunTasks {
			return taskrules.Full()
		}
		call := []byte(h.Call)
		if old := rb.Get(call); old != nil {
			if ms, ok := taskExpires(old); ok {
				if err := xb.Delete(taskExpiryKey(ms, h.Run, h.Call)); err != nil {
					return err
				}
			}
		}
		if err := rb.Put(call, rec); err != nil {
			return err
		}
		return xb.Put(taskExpiryKey(exp, h.Run, h.Call), nil)
	})
}

// dropExpired deletes the expired handles of one run's bucket and counts
// the others, but for call. A bucket of more than MaxRunTasks entries is
// not one this package wrote (a save never leaves more): it is refused
// before more of it is read.
func (r *Repo) dropExpired(rb, xb *bolt.Bucket, run, call string, now time.Time) (live int, err error) {
	var dead [][]byte
	n := 0
	c := rb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if n++; n > taskrules.MaxRunTasks {
			return 0, r.damagedTask("a run holds more than MaxRunTasks task handles")
		}
		ms, ok := taskExpires(v)
		if !ok {
			return 0, r.damagedTask("a stored task handle is damaged or of an unknown version")
		}
		if taskrules.Expired(time.UnixMilli(ms), now) {
			dead = append(dead, bytes.Clone(k))
			if err := xb.Delete(taskExpiryKey(ms, run, string(k))); err != nil {
				return 0, err
			}
			continue
		}
		if string(k) != call {
			live++
		}
	}
	for _, k := range dead {
		if err := rb.Delete(k); err != nil {
			return 0, err
		}
	}
	return live, nil
}

// sweepTasks deletes up to maxTaskSweep expired handles of any run,
// earliest first, through the expiry index. An index entry whose handle
// was replaced or deleted is dropped alone.
func (r *Repo) sweepTasks(tb, xb *bolt.Bucket, now time.Time) error {
	type entry struct {
		key, run, call []byte
		ms             int64
	}
	var due []entry
	c := xb.Cursor()
	for k, _ := c.First(); k != nil && len(due) < maxTaskSweep; k, _ = c.Next() {
		sep := bytes.IndexByte(k[min(8, len(k)):], 0)
		if len(k) < 8 || sep < 0 {
			return r.damagedTask("an entry of the task expiry index is damaged")
		}
		ms := int64(binary.BigEndian.Uint64(k))
		if !taskrules.Expired(time.UnixMilli(ms), now) {
			break
		}
		due = append(due, entry{key: bytes.Clone(k), run: bytes.Clone(k[8 : 8+sep]), call: bytes.Clone(k[8+sep+1:]), ms: ms})
	}
	for _, e := range due {
		if err := xb.Delete(e.key); err != nil {
			return err
		}
		rb := tb.Bucket(e.run)
		if rb == nil {
			continue
		}
		if v := rb.Get(e.call); v != nil {
			if ms, ok := taskExpires(v); ok && ms == e.ms {
				if err := rb.Delete(e.call); err != nil {
					return err
				}
			}
		}
		if err := deleteIfEmpty(tb, rb, e.run); err != nil {
			return err
		}
	}
	return nil
}

// deleteIfEmpty deletes the bucket of a run that holds no handle.
func deleteIfEmpty(tb, rb *bolt.Bucket, run []byte) error {
	if k, _ := rb.Cursor().First(); k != nil {
		return nil
	}
	return tb.DeleteBucket(run)
}

// Tasks returns the run's handles that have not expired, sorted by call,
// read in one read transaction. Expired ones are skipped, not deleted: the
// next SaveTask deletes them.
func (r *Repo) Tasks(ctx context.Context, run string) ([]resource.TaskHandle, error) {
	if err := taskrules.Run(ctx, run); err != nil {
		return nil, err
	}
	out := []resource.TaskHandle{}
	err := r.withDB(ctx, false, func(tx *bolt.Tx) error {
		tb, _, err := r.taskBuckets(tx)
		if err != nil {
			return err
		}
		rb := tb.Bucket([]byte(run))
		if rb == nil {
			return nil
		}
		now := time.Now()
		n := 0
		c := rb.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n > taskrules.MaxRunTasks {
				return r.damagedTask("a run holds more than MaxRunTasks task handles")
			}
			h, err := r.decodeTask(run, string(k), v)
			if err != nil {
				return err
			}
			if !taskrules.Expired(h.Expires, now) {
				out = append(out, h)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTask removes the handle of (run, call) and its index entry; none
// there is not an error. A damaged record is deleted too.
func (r *Repo) DeleteTask(ctx context.Context, run, call string) error {
	if err := taskrules.Key(ctx, run, call); err != nil {
		return err
	}
	return r.withDB(ctx, true, func(tx *bolt.Tx) error {
		tb, xb, err := r.taskBuckets(tx)
		if err != nil {
			return err
		}
		rb := tb.Bucket([]byte(run))
		if rb == nil {
			return nil
		}
		v := rb.Get([]byte(call))
		if v == nil {
			return nil
		}
		if ms, ok := taskExpires(v); ok {
			if err := xb.Delete(taskExpiryKey(ms, run, call)); err != nil {
				return err
			}
		}
		if err := rb.Delete([]byte(call)); err != nil {
			return err
		}
		return deleteIfEmpty(tb, rb, []byte(run))
	})
}
