package boltrepo_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

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

// BenchmarkReadShared is Repo.Get in shared mode: the price of opening the
// file for each operation.
func BenchmarkReadShared(b *testing.B) {
	repo := benchRepo(b, &boltrepo.Options{Shared: true})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := repo.Get(ctx, benchKey); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteShared is BenchmarkWrite in shared mode.
func BenchmarkWriteShared(b *testing.B) {
	repo := benchRepo(b, &boltrepo.Options{Shared: true})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := repo.Update(ctx, benchKey, benchDoc, resource.AnyRevision); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBoltRaw does the same work in raw bbolt transactions: Get reads
// and copies the value, Put writes a value of the same size. The ratio to
// BenchmarkRead and BenchmarkWrite is the repository's overhead.
func BenchmarkBoltRaw(b *testing.B) {
	open := func(b *testing.B) *bolt.DB {
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
	b.Run("Get", func(b *testing.B) {
		db := open(b)
		b.ReportAllocs()
		for b.Loop() {
			var out []byte
			err := db.View(func(tx *bolt.Tx) error {
				v := tx.Bucket([]byte("resources")).Bucket([]byte("mcp")).Get([]byte("tools/files"))
				out = make([]byte, len(v))
				copy(out, v)
				return nil
			})
			if err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("Put", func(b *testing.B) {
		db := open(b)
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
