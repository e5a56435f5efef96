package resource_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agtsdk/agt/resource"
)

func TestStoreRegistry(t *testing.T) {
	t.Parallel()
	var opened string
	resource.RegisterStore("agt-test-store", func(_ context.Context, url string) (resource.Repository, func() error, error) {
		opened = url
		return nil, func() error { return nil }, nil
	})
	if !slices.Contains(resource.StoreSchemes(), "agt-test-store") {
		t.Errorf("StoreSchemes() = %q; want agt-test-store in it", resource.StoreSchemes())
	}
	if _, closeRepo, err := resource.OpenStore(bg, "AGT-TEST-STORE://x/y"); err != nil || closeRepo == nil || opened != "AGT-TEST-STORE://x/y" {
		t.Errorf("OpenStore of a registered scheme: err %v, opener saw %q", err, opened)
	}
	if _, _, err := resource.OpenStore(bg, "agt-nobody://x"); !errors.Is(err, resource.ErrNoStore) {
		t.Errorf("OpenStore of an unregistered scheme: err = %v; want ErrNoStore", err)
	}
	for _, tc := range []struct{ store, want string }{
		{"postgres://h/db", "postgres"},
		{"PostgreSQL://h/db", "postgresql"},
		{"/var/lib/agt/agt.db", ""},
		{"data/", ""},
		{"/odd/dir://name", ""},
		{"1x://h", ""},
	} {
		if got := resource.StoreScheme(tc.store); got != tc.want {
			t.Errorf("StoreScheme(%q) = %q; want %q", tc.store, got, tc.want)
		}
	}
	open := func(context.Context, string) (resource.Repository, func() error, error) { return nil, nil, nil }
	for name, register := range map[string]func(){
		"twice":       func() { resource.RegisterStore("agt-test-store", open) },
		"nil opener":  func() { resource.RegisterStore("agt-test-nil", nil) },
		"not lowered": func() { resource.RegisterStore("Agt-Test", open) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterStore %s did not panic", name)
				}
			}()
			register()
		}()
	}
}
