package resource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// storeOpener opens the Repository a store URL names, as a store package
// registers it with RegisterStore.
type storeOpener = func(ctx context.Context, url string) (repo Repository, closeRepo func() error, err error)

// ErrNoStore: no store package registered the URL's scheme. The program
// links only the stores it imports (database/sql style): import the
// package that registers the scheme, such as
// github.com/agtsdk/agt/resource/pgrepo for postgres:// URLs.
var ErrNoStore = errors.New("resource: no store is registered for this URL scheme")

// The registry is written by the init functions of store packages and read
// when a store is opened; as with database/sql drivers, it is what lets a
// program that does not import a store link none of its code.
var stores struct {
	mu sync.RWMutex
	m  map[string]storeOpener
}

// RegisterStore makes the Repository a store package provides available by
// URL scheme ("postgres" for postgres://...), for OpenStore and agt.Open:
// open opens the Repository a URL of that scheme names, and its closeRepo
// releases it (the caller of OpenStore calls it when done).
// Store packages call it from init. It panics if open is nil, the scheme is
// not a lowercase URL scheme, or the scheme is registered twice: each is a
// mistake in the program, not in its input.
func RegisterStore(scheme string, open func(ctx context.Context, url string) (repo Repository, closeRepo func() error, err error)) {
	if open == nil {
		panic("resource: RegisterStore of " + scheme + " with a nil opener")
	}
	if !validScheme(scheme) {
		panic(fmt.Sprintf("resource: RegisterStore: %q is not a lowercase URL scheme", scheme))
	}
	stores.mu.Lock()
	defer stores.mu.Unlock()
	if _, dup := stores.m[scheme]; dup {
		panic("resource: RegisterStore called twice for scheme " + scheme)
	}
	if stores.m == nil {
		stores.m = map[string]storeOpener{}
	}
	stores.m[scheme] = open
}

// storeSchemes returns the registered URL schemes, sorted.
func storeSchemes() []string {
	stores.mu.RLock()
	defer stores.mu.RUnlock()
	out := make([]string, 0, len(stores.m))
	for s := range stores.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// storeScheme returns the scheme of a store URL ("postgres" for
// "postgres://..."), or "" when store is not a URL (a file path).
func storeScheme(store string) string {
	scheme, _, ok := strings.Cut(store, "://")
	if !ok || !validScheme(strings.ToLower(scheme)) {
		return ""
	}
	return strings.ToLower(scheme)
}

// OpenStore opens the Repository url names with the opener registered for
// its scheme. The error wraps ErrNoStore when none is registered (the
// message does not repeat the URL, which may hold a password).
func OpenStore(ctx context.Context, url string) (Repository, func() error, error) {
	scheme := storeScheme(url)
	stores.mu.RLock()
	open := stores.m[scheme]
	stores.mu.RUnlock()
	if open == nil {
		return nil, nil, fmt.Errorf("%w: scheme %q (registered: %s); import the package that provides it, such as github.com/agtsdk/agt/resource/pgrepo for postgres",
			ErrNoStore, scheme, strings.Join(orNone(storeSchemes()), ", "))
	}
	return open(ctx, url)
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"none"}
	}
	return s
}

func validScheme(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
