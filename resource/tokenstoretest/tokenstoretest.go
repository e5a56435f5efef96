package tokenstoretest

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agtsdk/agt/resource"
)

// Concurrency sizes of the suite.
const (
	// Goroutines is how many goroutines race in ConcurrentUpdate.
	Goroutines = 16
	// IncrementsPerGoroutine is how many increments each of them lands.
	IncrementsPerGoroutine = 8
)

// Run runs the conformance suite against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) resource.TokenStore) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s resource.TokenStore)
	}{
		{"LoadMissing", testLoadMissing},
		{"CreateReplaceDelete", testCreateReplaceDelete},
		{"EmptyDeletes", testEmptyDeletes},
		{"DeleteMissing", testDeleteMissing},
		{"FuncErrorWritesNothing", testFuncError},
		{"FuncPanicWritesNothing", testFuncPanic},
		{"RefsIsolated", testRefsIsolated},
		{"BytesAreCopies", testBytesAreCopies},
		{"ExactBytes", testExactBytes},
		{"InvalidRef", testInvalidRef},
		{"SizeBound", testSizeBound},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentUpdate", testConcurrentUpdate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

const refA, refB resource.Ref = "alpha", "tools/beta"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func set(t *testing.T, s resource.TokenStore, ref resource.Ref, v string) {
	t.Helper()
	if err := s.Update(ctx(t), ref, func([]byte) ([]byte, error) { return []byte(v), nil }); err != nil {
		t.Fatalf("Update(%s): %v", ref, err)
	}
}

func wantValue(t *testing.T, s resource.TokenStore, ref resource.Ref, want string) {
	t.Helper()
	got, err := s.Load(ctx(t), ref)
	if err != nil {
		t.Fatalf("Load(%s): %v", ref, err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatalf("Load(%s) mismatch (-want +got):\n%s", ref, diff)
	}
}

func wantMissing(t *testing.T, s resource.TokenStore, ref resource.Ref) {
	t.Helper()
	if v, err := s.Load(ctx(t), ref); !errors.Is(err, resource.ErrNotFound) {
		t.Fatalf("Load(%s) = %d bytes, %v; want ErrNotFound", ref, len(v), err)
	}
}

// wantOld runs one Update that checks what f receives and writes nothing.
func wantOld(t *testing.T, s resource.TokenStore, ref resource.Ref, want []byte) {
	t.Helper()
	var got []byte
	keep := errors.New("keep")
	err := s.Update(ctx(t), ref, func(old []byte) ([]byte, error) {
		got = bytes.Clone(old)
		if old == nil {
			got = nil
		}
		return nil, keep
	})
	if !errors.Is(err, keep) {
		t.Fatalf("Update err = %v, want f's error", err)
	}
	if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
		t.Fatalf("f got old = %q (nil %v), want %q (nil %v)", got, got == nil, want, want == nil)
	}
}

func testLoadMissing(t *testing.T, s resource.TokenStore) {
	wantMissing(t, s, refA)
	wantOld(t, s, refA, nil)
}

func testCreateReplaceDelete(t *testing.T, s resource.TokenStore) {
	set(t, s, refA, `{"access_token":"one"}`)
	wantValue(t, s, refA, `{"access_token":"one"}`)
	wantOld(t, s, refA, []byte(`{"access_token":"one"}`))
	set(t, s, refA, `{"access_token":"two"}`)
	wantValue(t, s, refA, `{"access_token":"two"}`)
	if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatalf("Update returning nil: %v", err)
	}
	wantMissing(t, s, refA)
	wantOld(t, s, refA, nil)
	// Binary values, not only JSON: the bytes are opaque.
	bin := string([]byte{0, 1, 0xff, '\n', 0})
	set(t, s, refA, bin)
	wantValue(t, s, refA, bin)
}

func testEmptyDeletes(t *testing.T, s resource.TokenStore) {
	set(t, s, refA, "v")
	if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return []byte{}, nil }); err != nil {
		t.Fatalf("Update returning empty: %v", err)
	}
	wantMissing(t, s, refA)
}

func testDeleteMissing(t *testing.T, s resource.TokenStore) {
	if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatalf("delete of a missing value: %v", err)
	}
	wantMissing(t, s, refA)
}

func testFuncError(t *testing.T, s resource.TokenStore) {
	boom := errors.New("refresh failed")
	// Nothing is created by a failing f ...
	err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return []byte("half"), boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Update err = %v, want f's error", err)
	}
	wantMissing(t, s, refA)
	// ... nor replaced, nor deleted.
	set(t, s, refA, "kept")
	for _, ret := range [][]byte{[]byte("other"), nil} {
		if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return ret, boom }); !errors.Is(err, boom) {
			t.Fatalf("Update err = %v, want f's error", err)
		}
		wantValue(t, s, refA, "kept")
	}
}

// testFuncPanic: a panic of f reaches the caller, writes nothing, and
// leaves the store usable (no lock left held).
func testFuncPanic(t *testing.T, s resource.TokenStore) {
	set(t, s, refA, "kept")
	func() {
		defer func() {
			if v := recover(); v != "f panicked" {
				t.Fatalf("recovered %v, want f's panic", v)
			}
		}()
		_ = s.Update(ctx(t), refA, func([]byte) ([]byte, error) { panic("f panicked") })
		t.Fatal("Update returned after f panicked")
	}()
	wantValue(t, s, refA, "kept")
	set(t, s, refA, "next")
	wantValue(t, s, refA, "next")
}

func testRefsIsolated(t *testing.T, s resource.TokenStore) {
	set(t, s, refA, "a")
	set(t, s, refB, "b")
	// A prefix of another reference is its own key.
	set(t, s, "tools", "t")
	wantValue(t, s, refA, "a")
	wantValue(t, s, refB, "b")
	wantValue(t, s, "tools", "t")
	if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	wantMissing(t, s, refA)
	wantValue(t, s, refB, "b")
	wantMissing(t, s, "tools/other")
}

func testBytesAreCopies(t *testing.T, s resource.TokenStore) {
	in := []byte("original")
	if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return in, nil }); err != nil {
		t.Fatal(err)
	}
	copy(in, "XXXXXXXX")
	out, err := s.Load(ctx(t), refA)
	if err != nil {
		t.Fatal(err)
	}
	copy(out, "YYYYYYYY")
	err = s.Update(ctx(t), refA, func(old []byte) ([]byte, error) {
		copy(old, "ZZZZZZZZ") // a write into old changes nothing stored
		return nil, errors.New("keep")
	})
	if err == nil {
		t.Fatal("Update: want f's error")
	}
	wantValue(t, s, refA, "original")
}

func testInvalidRef(t *testing.T, s resource.TokenStore) {
	for _, ref := range []resource.Ref{"", "a/b/c", "UPPER", "../x", "a b"} {
		if _, err := s.Load(ctx(t), ref); err == nil || errors.Is(err, resource.ErrNotFound) {
			t.Errorf("Load(%q) err = %v, want an invalid reference error", ref, err)
		}
		called := false
		err := s.Update(ctx(t), ref, func([]byte) ([]byte, error) { called = true; return []byte("v"), nil })
		if err == nil || called {
			t.Errorf("Update(%q) err = %v, f called %v; want an error before f", ref, err, called)
		}
	}
}

func testSizeBound(t *testing.T, s resource.TokenStore) {
	max := bytes.Repeat([]byte("m"), resource.MaxTokenBytes)
	if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return max, nil }); err != nil {
		t.Fatalf("Update of exactly MaxTokenBytes: %v", err)
	}
	wantValue(t, s, refA, string(max))
	over := bytes.Repeat([]byte("o"), resource.MaxTokenBytes+1)
	err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return over, nil })
	if err == nil {
		t.Fatal("Update of MaxTokenBytes+1: want an error")
	}
	if bytes.Contains([]byte(err.Error()), []byte("ooo")) {
		t.Fatalf("the error carries the value: %.80s", err)
	}
	wantValue(t, s, refA, string(max))
}

func testCanceledContext(t *testing.T, s resource.TokenStore) {
	set(t, s, refA, "v")
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Load(c, refA); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load err = %v, want context.Canceled", err)
	}
	err := s.Update(c, refA, func([]byte) ([]byte, error) { return []byte("w"), nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update err = %v, want context.Canceled", err)
	}
	wantValue(t, s, refA, "v")
}

// testConcurrentUpdate: Goroutines writers each add one to a counter
// IncrementsPerGoroutine times. A lost update leaves the count short.
func testConcurrentUpdate(t *testing.T, s resource.TokenStore) {
	var wg sync.WaitGroup
	errs := make(chan error, Goroutines)
	for range Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range IncrementsPerGoroutine {
				err := s.Update(ctx(t), refA, func(old []byte) ([]byte, error) {
					n := 0
					if old != nil {
						var err error
						if n, err = strconv.Atoi(string(old)); err != nil {
							return nil, err
						}
					}
					return []byte(strconv.Itoa(n + 1)), nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Update: %v", err)
	}
	wantValue(t, s, refA, strconv.Itoa(Goroutines*IncrementsPerGoroutine))
}

// testExactBytes: a credential's bytes come back exactly, every byte
// value included, to Load and to the next Update's old (mcpconn keeps a
// DPoP private key inside the credential and rewrites the credential
// around it at each refresh: a store that alters a byte loses the key
// the token is bound to).
func testExactBytes(t *testing.T, s resource.TokenStore) {
	v := make([]byte, 0, 512)
	for i := range 256 {
		v = append(v, byte(i))
	}
	v = append(v, `{"dpop_key":"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg"}`...)
	if err := s.Update(ctx(t), refA, func([]byte) ([]byte, error) { return v, nil }); err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, refA, string(v))
	err := s.Update(ctx(t), refA, func(old []byte) ([]byte, error) {
		if !bytes.Equal(old, v) {
			t.Errorf("Update's old differs from what was stored")
		}
		return append(old, 0), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, refA, string(v)+"\x00")
}
