// Package p is a fixture for TestSurface.
package p

import "context"

// Exported and unexported names of every kind.
const (
	A     = 1
	B int = 2
	c     = 3
)

var V, w = 1, 2

type T struct {
	Name   string
	hidden int
	U              // embedded
	X, Y   float64 // two names
	inline struct{ Z int }
}

type U interface {
	Do(ctx context.Context, n int) (string, error)
	undo()
}

type Alias = T

type List[E any] []E

type unexported struct{ F int }

func F(a, b int, rest ...string) error { return nil }

func G[K comparable](k K) {}

func (t *T) M() (n int, err error) { return 0, nil }

func (T) N() {}

func (unexported) O() {}

func f() {}
