package pgrepo_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/resource/pgrepo"
)

// The benchmarks read and write one agent document through pgrepo, through
// raw pgx running the same SQL (the floor pgrepo can reach), and through
// boltrepo, so one run gives both ratios:
//
//	go test -run '^$' -bench . -benchmem ./resource/pgrepo
//
// The PostgreSQL figures depend on the server's fsync setting; boltrepo is
// measured with and without fsync for that reason.

var benchData = json.RawMessage(`{"name":"triage","enabled":true,"capabilities":["resource_management"],"mcps":["tools/fs","tools/git","search"]}`)

var benchKey = resource.Key{Kind: resource.KindAgent, Ref: "ops/triage"}

func benchPg(b *testing.B) (*pgrepo.Repo, *pgxpool.Pool, string) {
	b.Helper()
	conn, schema := testConnString(b), newSchema(b)
	repo := openRepoAt(b, conn, schema)
	if _, err := repo.Create(context.Background(), benchKey, benchData); err != nil {
		b.Fatal(err)
	}
	pool, err := pgxpool.New(context.Background(), conn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return repo, pool, pgx.Identifier{schema, pgrepo.TableName}.Sanitize()
}

func benchBolt(b *testing.B, noSync bool) *boltrepo.Repo {
	b.Helper()
	repo, err := boltrepo.Open(filepath.Join(b.TempDir(), "agt.db"), &boltrepo.Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { repo.Close() })
	if _, err := repo.Create(context.Background(), benchKey, benchData); err != nil {
		b.Fatal(err)
	}
	return repo
}

func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	b.Run("pgrepo", func(b *testing.B) {
		repo, _, _ := benchPg(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := repo.Get(ctx, benchKey); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pgx_raw", func(b *testing.B) {
		_, pool, table := benchPg(b)
		sql := "SELECT revision, data, created_at, updated_at FROM " + table + " WHERE kind = $1 AND ref = $2 AND NOT deleted"
		b.ReportAllocs()
		for b.Loop() {
			var res resource.Resource
			if err := pool.QueryRow(ctx, sql, string(benchKey.Kind), string(benchKey.Ref)).Scan(&res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("boltrepo", func(b *testing.B) {
		repo := benchBolt(b, false)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := repo.Get(ctx, benchKey); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWrite is a compare-and-set Update, the write every save makes.
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	b.Run("pgrepo", func(b *testing.B) {
		repo, _, _ := benchPg(b)
		rev := int64(1)
		b.ReportAllocs()
		for b.Loop() {
			res, err := repo.Update(ctx, benchKey, benchData, rev)
			if err != nil {
				b.Fatal(err)
			}
			rev = res.Revision
		}
	})
	b.Run("pgx_raw", func(b *testing.B) {
		_, pool, table := benchPg(b)
		sql := "UPDATE " + table + " SET revision = revision + 1, data = $3, updated_at = now()" +
			" WHERE kind = $1 AND ref = $2 AND NOT deleted AND ($4::bigint = 0 OR revision = $4)" +
			" RETURNING revision, data, created_at, updated_at"
		rev := int64(1)
		b.ReportAllocs()
		for b.Loop() {
			var res resource.Resource
			if err := pool.QueryRow(ctx, sql, string(benchKey.Kind), string(benchKey.Ref), []byte(benchData), rev).Scan(&res.Revision, &res.Data, &res.CreatedAt, &res.UpdatedAt); err != nil {
				b.Fatal(err)
			}
			rev = res.Revision
		}
	})
	for _, bolt := range []struct {
		name   string
		noSync bool
	}{{"boltrepo", false}, {"boltrepo_nosync", true}} {
		b.Run(bolt.name, func(b *testing.B) {
			repo := benchBolt(b, bolt.noSync)
			rev := int64(1)
			b.ReportAllocs()
			for b.Loop() {
				res, err := repo.Update(ctx, benchKey, benchData, rev)
				if err != nil {
					b.Fatal(err)
				}
				rev = res.Revision
			}
		})
	}
}
