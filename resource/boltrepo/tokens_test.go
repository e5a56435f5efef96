package boltrepo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/boltrepo"
	"github.com/agtsdk/agt/resource/tokenstoretest"
)

func openTokens(t *testing.T, path string) *boltrepo.TokenStore {
	t.Helper()
	s, err := boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTokenStoreConformance(t *testing.T) {
	t.Parallel()
	tokenstoretest.Run(t, func(t *testing.T) resource.TokenStore {
		return openTokens(t, filepath.Join(t.TempDir(), "tokens.db"))
	})
}

// Two stores on one file (two descriptors, as two processes have) share
// the counter through the file lock: no increment is lost.
func TestTokenStoreTwoOpensShareTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens.db")
	stores := []resource.TokenStore{openTokens(t, path), openTokens(t, path)}
	const perStore = 50
	errs := make(chan error, len(stores))
	for _, s := range stores {
		go func() {
			for range perStore {
				if err := increment(context.Background(), s); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range stores {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	wantCount(t, stores[0], len(stores)*perStore)
}

const (
	tokenChildEnv     = "AGT_BOLTREPO_TEST_TOKEN_CHILD"
	tokenChildUpdates = 100
	tokenCounterRef   = resource.Ref("shared/counter")
)

func increment(ctx context.Context, s resource.TokenStore) error {
	return s.Update(ctx, tokenCounterRef, func(old []byte) ([]byte, error) {
		n := 0
		if old != nil {
			var err error
			if n, err = strconv.Atoi(string(old)); err != nil {
				return nil, err
			}
		}
		return []byte(strconv.Itoa(n + 1)), nil
	})
}

func wantCount(t *testing.T, s resource.TokenStore, want int) {
	t.Helper()
	v, err := s.Load(context.Background(), tokenCounterRef)
	if err != nil {
		t.Fatal(err)
	}
	if string(v) != strconv.Itoa(want) {
		t.Fatalf("counter = %s, want %d", v, want)
	}
}

// runTokenChild is one updating process of TestTokenStoreTwoProcesses.
func runTokenChild(path string) int {
	s, err := boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{LockTimeout: 30 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	for range tokenChildUpdates {
		if err := increment(context.Background(), s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// Two OS processes refresh one token at once (a host and the CLI): every
// one of their 200 read-modify-writes lands.
func TestTokenStoreTwoProcesses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens.db")
	s := openTokens(t, path)
	cmds := make([]*exec.Cmd, 2)
	stderr := make([]bytes.Buffer, len(cmds))
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^$")
		cmds[i].Env = append(os.Environ(), tokenChildEnv+"="+path)
		cmds[i].Stderr = &stderr[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, stderr[i].String())
		}
	}
	wantCount(t, s, len(cmds)*tokenChildUpdates)
}

func TestTokenStoreFileMode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens.db")
	s := openTokens(t, path)
	if err := increment(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Fatalf("new token file mode = %04o, want 0600", got)
	}
}

// A token file that group or others may read or write is refused, at
// open and at every operation of a store already open; 0600
// is accepted again.
func TestTokenStoreRefusesOpenMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []os.FileMode{0o640, 0o604, 0o620, 0o602, 0o644, 0o666} {
		t.Run(fmt.Sprintf("%04o", mode), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "tokens.db")
			s := openTokens(t, path)
			if err := increment(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			wantModeError := func(what string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("mode %04o", mode)) || !strings.Contains(err.Error(), "chmod 600") {
					t.Fatalf("%s err = %v, want the mode refused with its fix", what, err)
				}
			}
			_, err := boltrepo.OpenTokenStore(path, nil)
			wantModeError("OpenTokenStore", err)
			_, err = s.Load(context.Background(), tokenCounterRef)
			wantModeError("Load", err)
			wantModeError("Update", increment(context.Background(), s))
			if err := os.Chmod(path, 0o600); err != nil {
				t.Fatal(err)
			}
			wantCount(t, s, 1) // nothing was written meanwhile
		})
	}
}

func TestTokenStoreAndResourceStoreKeptApart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repoPath, tokenPath := filepath.Join(dir, "agt.db"), filepath.Join(dir, "tokens.db")
	openRepo(t, repoPath, nil).Close()
	if _, err := boltrepo.OpenTokenStore(repoPath, nil); err == nil || !strings.Contains(err.Error(), "resource store, not a token store") {
		t.Fatalf("OpenTokenStore of a resource store err = %v", err)
	}
	openTokens(t, tokenPath).Close()
	if _, err := boltrepo.Open(tokenPath, nil); err == nil || !strings.Contains(err.Error(), "token store") {
		t.Fatalf("Open of a token store err = %v", err)
	}
}

// A value over resource.MaxTokenBytes written into the file by another
// program is refused on read, not handed out; Update refuses it too and
// writes nothing.
func TestTokenStoreOversizedStoredValue(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens.db")
	openTokens(t, path).Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("s"), resource.MaxTokenBytes+1)
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("tokens")).Put([]byte("big"), big) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := openTokens(t, path)
	v, err := s.Load(context.Background(), "big")
	if err == nil || len(v) != 0 || strings.Contains(err.Error(), "sss") {
		t.Fatalf("Load = %d bytes, %v; want a value-free error", len(v), err)
	}
	called := false
	err = s.Update(context.Background(), "big", func([]byte) ([]byte, error) { called = true; return nil, nil })
	if err == nil || called {
		t.Fatalf("Update err = %v, f called %v; want an error before f", err, called)
	}
}

func TestTokenStoreClosed(t *testing.T) {
	t.Parallel()
	s := openTokens(t, filepath.Join(t.TempDir(), "tokens.db"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(context.Background(), "a"); !errors.Is(err, boltrepo.ErrClosed) {
		t.Fatalf("Load after Close err = %v, want ErrClosed", err)
	}
	if err := increment(context.Background(), s); !errors.Is(err, boltrepo.ErrClosed) {
		t.Fatalf("Update after Close err = %v, want ErrClosed", err)
	}
}

// A token file damaged on disk (truncated, or another program's bytes) is
// an error, at open and for a store already open, never a crash.
func TestTokenStoreDamagedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens.db")
	s := openTokens(t, path)
	if err := increment(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	if _, err := boltrepo.OpenTokenStore(path, nil); !errors.Is(err, boltrepo.ErrDamaged) {
		t.Fatalf("OpenTokenStore of a truncated file err = %v, want ErrDamaged", err)
	}
	if _, err := s.Load(context.Background(), tokenCounterRef); !errors.Is(err, boltrepo.ErrDamaged) {
		t.Fatalf("Load from a truncated file err = %v, want ErrDamaged", err)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte("not bbolt "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := boltrepo.OpenTokenStore(path, nil); err == nil {
		t.Fatal("OpenTokenStore of a foreign file: want an error")
	}
}

// BenchmarkTokenStore: the cost of one Load and one Update (fsync on) of a
// token store that opens its file per operation.
func BenchmarkTokenStore(b *testing.B) {
	s, err := boltrepo.OpenTokenStore(filepath.Join(b.TempDir(), "tokens.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	value := bytes.Repeat([]byte("t"), 2048) // a token response with a refresh token
	b.Run("Update", func(b *testing.B) {
		for b.Loop() {
			if err := s.Update(ctx, "remote", func([]byte) ([]byte, error) { return value, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Load", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Load(ctx, "remote"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A token store is always shared: when another process holds the file
// past LockTimeout, the error names the option it has (LockTimeout), not
// Options.Shared, which TokenStoreOptions lacks.
func TestTokenStoreLockTimeoutNamesItsOption(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens.db")
	s, err := boltrepo.OpenTokenStore(path, &boltrepo.TokenStoreOptions{NoSync: true, LockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	holder, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	_, err = s.Load(context.Background(), "x")
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("Load of a held file: %v, want it to say the file is locked", err)
	}
	if strings.Contains(err.Error(), "Shared") || !strings.Contains(err.Error(), "LockTimeout") {
		t.Errorf("err = %v, want it to name LockTimeout and not Shared", err)
	}
}
