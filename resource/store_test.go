package resource_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agtsdk/agt/internal/resourcefn"
	"github.com/agtsdk/agt/resource"
)

var storeRuns atomic.Int64

func TestStoreRegistry(t *testing.T) {
	t.Parallel()
	var opened string
	// A scheme of this run's own: registering one twice panics, and -count
	// runs the test again in the same process.
	scheme := fmt.Sprintf("agt-test-store%d", storeRuns.Add(1))
	resource.RegisterStore(scheme, func(_ context.Context, url string) (resource.Repository, func() error, error) {
		opened = url
		return nil, func() error { return nil }, nil
	})
	if !slices.Contains(resource.StoreSchemes(), scheme) {
		t.Errorf("StoreSchemes() = %q; want %s in it", resource.StoreSchemes(), scheme)
	}
	upper := strings.ToUpper(scheme) + "://x/y"
	if _, closeRepo, err := resource.OpenStore(bg, upper); err != nil || closeRepo == nil || opened != upper {
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
		if got := resourcefn.StoreScheme(tc.store); got != tc.want {
			t.Errorf("StoreScheme(%q) = %q; want %q", tc.store, got, tc.want)
		}
	}
	open := func(context.Context, string) (resource.Repository, func() error, error) { return nil, nil, nil }
	for name, register := range map[string]func(){
		"twice":       func() { resource.RegisterStore(scheme, open) },
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

// Every accessor of internal/resourcefn is set once package resource is
// imported: a nil one would panic in mcpconn, agt or cmd/agt.
func TestResourcefnSet(t *testing.T) {
	t.Parallel()
	for name, set := range map[string]bool{
		"ResolveHeaders":     resourcefn.ResolveHeaders != nil,
		"ResolveOAuthSecret": resourcefn.ResolveOAuthSecret != nil,
		"MaskURL":            resourcefn.MaskURL != nil,
		"MaskArgs":           resourcefn.MaskArgs != nil,
		"StoreScheme":        resourcefn.StoreScheme != nil,
	} {
		if !set {
			t.Errorf("resourcefn.%s is not set by package resource", name)
		}
	}
}
