package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/zalando/go-keyring"

	"github.com/agtsdk/agt/resource"
)

// memKeyring is an in-memory keychain standing in for the OS's, one per
// test (go-keyring's MockInit replaces the process's provider). stall,
// when set, holds the next Set until it is closed, as a keychain waiting
// for a person to unlock it does.
type memKeyring struct {
	mu    sync.Mutex
	items map[string]string // by user, for keyringService
	sets  int
	stall chan struct{}
}

func (m *memKeyring) Get(service, user string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.items[service+"/"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (m *memKeyring) Set(service, user, pw string) error {
	m.mu.Lock()
	m.sets++
	stall := m.stall
	m.stall = nil
	m.mu.Unlock()
	if stall != nil {
		<-stall
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = map[string]string{}
	}
	m.items[service+"/"+user] = pw
	return nil
}

func (m *memKeyring) Delete(service, user string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.items[service+"/"+user]; !ok {
		return keyring.ErrNotFound
	}
	delete(m.items, service+"/"+user)
	return nil
}

func (m *memKeyring) DeleteAll(string) error { return errors.New("memKeyring: DeleteAll is not used") }

// values lists what the keychain holds, sorted.
func (m *memKeyring) values() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var vs []string
	for _, v := range m.items {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

func (m *memKeyring) setCalls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sets
}

// readSecretsDoc reads the secret file as stored.
func readSecretsDoc(t *testing.T, path string) secretsDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc secretsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// A keychain Set that does not answer is given up on after
// keyringTimeout, and its goroutine is accounted for: a later call waits
// for it (one goroutine at most outlives its caller; the bubble ends only
// when it has returned), gives up with "still runs" when it does not end,
// and once it ends, a newer set lands after it: the late Set wrote an
// item nothing points to, deleted by the newer set, and the newer value
// is the one read.
func TestKeychainSetGivenUpOn(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), secretsFile)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		kr := &memKeyring{}
		s := &secretStore{path: path, mode: storeKeyring, kc: newKeychain(kr, keyringTimeout)}
		if _, _, err := s.set(ctx, "tok", "v1", nil); err != nil {
			t.Fatal(err)
		}
		stall := make(chan struct{})
		kr.stall = stall
		_, _, err := s.set(ctx, "tok", "v2-late", nil)
		if err == nil || !strings.Contains(err.Error(), "the OS keychain did not store it (it did not answer within 10s)") {
			t.Fatalf("set while the keychain does not answer = %v", err)
		}
		doc := readSecretsDoc(t, path)
		if len(doc.Orphans) != 1 || doc.Orphans[0] == doc.Secrets["tok"].Item {
			t.Errorf("after the set given up on: entry %+v, orphans %q: want the old item kept and the new one orphaned", doc.Secrets["tok"], doc.Orphans)
		}

		// The stalled Set still runs: a call waits for it, and gives up.
		_, _, err = s.set(ctx, "tok", "v3", nil)
		if err == nil || !strings.Contains(err.Error(), "an earlier operation that it did not answer still runs") {
			t.Errorf("set while the earlier Set runs = %v", err)
		}
		if n := kr.setCalls(); n != 2 {
			t.Errorf("the keychain saw %d Sets; want 2: no call starts while one runs", n)
		}

		// A newer set waits; the late Set lands first, then the newer one.
		done := make(chan error, 1)
		go func() {
			_, _, err := s.set(ctx, "tok", "v4", nil)
			done <- err
		}()
		synctest.Wait()
		if n := kr.setCalls(); n != 2 {
			t.Errorf("the keychain saw %d Sets while the stalled one ran; want 2", n)
		}
		close(stall)
		if err := <-done; err != nil {
			t.Fatalf("set after the stalled Set ended = %v", err)
		}
		if v, err := s.Resolve(ctx, resource.Ref("any"), "tok"); v != "v4" || err != nil {
			t.Errorf("Resolve = %q, %v; want the newer value", v, err)
		}
		if diff := cmp.Diff([]string{"v4"}, kr.values()); diff != "" {
			t.Errorf("keychain (-want +got): the late item and the old one are deleted\n%s", diff)
		}
		if doc := readSecretsDoc(t, path); len(doc.Orphans) != 0 {
			t.Errorf("orphans left: %q", doc.Orphans)
		}
	})
}
