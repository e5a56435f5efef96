package boltrepo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
)

// benchDoc is a typical MCP resource document (about 300 bytes).
var benchDoc = json.RawMessage(`{"mcpServers":{"files":{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","${cwd}/data"],"env":{"NODE_ENV":"production","LOG_LEVEL":"warn"},"cwd":"/srv/mcp/files","startup_timeout_ms":30000,"description":"` + strings.Repeat("x", 64) + `"}}}`)

var benchKey = resource.Key{Kind: resource.KindMCP, Ref: "tools/files"}

func benchRepo(b *testing.B, opts *boltrepo.Options) *boltrepo.Repo {
	b.Helper()
	repo, err := boltrepo.Open(filepath.Join(b.TempDir(), "agt.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { repo.Close() })
	if _, err := repo.Create(context.Background(), benchKey, benchDoc); err != nil {
		b.Fatal(err)
	}
	return repo
}

// BenchmarkRead is Repo.Get; compare with BenchmarkBoltRaw/Get.
func BenchmarkRead(b *testing.B) {
	repo := benchRepo(b, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := repo.Get(ctx, benchKey); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite is a compare-and-set Repo.Update (one fsynced commit);
// compare with BenchmarkBoltRaw/Put.
func BenchmarkWrite(b *testing.B) {
	repo := benchRepo(b, nil)
	ctx := context.Background()
	rev := int64(1)
	b.ReportAllocs()
	for b.Loop() {
		res, err := repo.Update(ctx, benchKey, benchDoc, rev)
		if err != nil {
			b.Fatal(err)
		}
		rev = res.Revision
	}
}

// BenchmarkBoltRaw does the same work in raw bbolt transactions: Get reads
// and copies the value, Put writes a value of the same size. The ratio to
// BenchmarkRead and BenchmarkWrite is the repository's overhead.
func BenchmarkBoltRaw(b *testing.B) {
	b.Run("Get", func(b *testing.B) {
		db := openRaw(b)
		b.ReportAllocs()
		for b.Loop() {
			if len(rawGet(b, db)) == 0 {
				b.Fatal("raw get found nothing")
			}
		}
	})
	b.Run("Put", func(b *testing.B) {
		db := openRaw(b)
		val := make([]byte, 25+len(benchDoc))
		b.ReportAllocs()
		for b.Loop() {
			err := db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("resources")).Bucket([]byte("mcp")).Put([]byte("tools/files"), val)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// openRaw opens a raw bbolt file holding one record of the size Repo
// stores for benchDoc (25 bytes of header plus the data).
func openRaw(b *testing.B) *bolt.DB {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucket([]byte("resources"))
		if err != nil {
			return err
		}
		kb, err := root.CreateBucket([]byte("mcp"))
		if err != nil {
			return err
		}
		return kb.Put([]byte("tools/files"), make([]byte, 25+len(benchDoc)))
	})
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// rawGet reads the record and copies it out of the transaction, as Repo.Get
// must.
func rawGet(b *testing.B, db *bolt.DB) []byte {
	var out []byte
	err := db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket([]byte("resources")).Bucket([]byte("mcp")).Get([]byte("tools/files"))
		out = make([]byte, len(v))
		copy(out, v)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// interleaved runs ours and base in rounds of n calls each, alternating
// which goes first, and reports the median of the per-round time ratios as
// metric: a burst of machine noise spoils a few rounds, not the result.
func interleaved(b *testing.B, n int, metric string, ours, base func()) {
	round := func(f func()) time.Duration {
		start := time.Now()
		for range n {
			f()
		}
		return time.Since(start)
	}
	var ratios []float64
	for b.Loop() {
		var o, w time.Duration
		if len(ratios)%2 == 0 {
			o, w = round(ours), round(base)
		} else {
			w, o = round(base), round(ours)
		}
		ratios = append(ratios, float64(o)/float64(w))
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], metric)
}

// BenchmarkReadVsRaw reports Repo.Get over the raw get of
// BenchmarkBoltRaw/Get, each on its own file holding the same record.
func BenchmarkReadVsRaw(b *testing.B) {
	repo := benchRepo(b, nil)
	db := openRaw(b)
	ctx := context.Background()
	interleaved(b, 64, "repo/raw", func() {
		if _, err := repo.Get(ctx, benchKey); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if len(rawGet(b, db)) == 0 {
			b.Fatal("raw get found nothing")
		}
	})
}

// BenchmarkWriteVsRaw reports a compare-and-set Repo.Update over the raw
// put of BenchmarkBoltRaw/Put (both fsync each commit).
func BenchmarkWriteVsRaw(b *testing.B) {
	repo := benchRepo(b, nil)
	db := openRaw(b)
	ctx := context.Background()
	rev := int64(1)
	val := make([]byte, 25+len(benchDoc))
	interleaved(b, 4, "repo/raw", func() {
		res, err := repo.Update(ctx, benchKey, benchDoc, rev)
		if err != nil {
			b.Fatal(err)
		}
		rev = res.Revision
	}, func() {
		err := db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("resources")).Bucket([]byte("mcp")).Put([]byte("tools/files"), val)
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkSharedVsExclusive reports the cost of Options.Shared: a Get and
// a blind Update of a shared Repo over the same on an exclusive one.
func BenchmarkSharedVsExclusive(b *testing.B) {
	ctx := context.Background()
	shared := benchRepo(b, &boltrepo.Options{Shared: true})
	excl := benchRepo(b, nil)
	b.Run("Read", func(b *testing.B) {
		interleaved(b, 16, "shared/exclusive", func() {
			if _, err := shared.Get(ctx, benchKey); err != nil {
				b.Fatal(err)
			}
		}, func() {
			if _, err := excl.Get(ctx, benchKey); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("Write", func(b *testing.B) {
		interleaved(b, 4, "shared/exclusive", func() {
			if _, err := shared.Update(ctx, benchKey, benchDoc, resource.AnyRevision); err != nil {
				b.Fatal(err)
			}
		}, func() {
			if _, err := excl.Update(ctx, benchKey, benchDoc, resource.AnyRevision); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkOpenLarge is an exclusive Open and Close of a store of 10,000
// typical resources (about 4 MB): the cost of the checks made before bbolt
// maps a file, the walk of its page tree included. NoSync keeps the fsync
// of Open's one write out of the figure.
func BenchmarkOpenLarge(b *testing.B) {
	path := filepath.Join(b.TempDir(), "agt.db")
	repo, err := boltrepo.Open(path, &boltrepo.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range 10000 {
		key := resource.Key{Kind: resource.KindMCP, Ref: resource.Ref(fmt.Sprintf("tools/srv-%05d", i))}
		if _, err := repo.Create(ctx, key, benchDoc); err != nil {
			b.Fatal(err)
		}
	}
	if err := repo.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		repo, err := boltrepo.Open(path, &boltrepo.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := repo.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
