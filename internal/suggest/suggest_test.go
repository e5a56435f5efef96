package suggest

import (
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"mcps", "mcps", 0},
		{"mpcs", "mcps", 1},
		{"mcp", "mcps", 1},
		{"resource_managment", "resource_management", 1},
		{"capabilites", "capabilities", 1},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau (2)
	} {
		if got := editDistance([]rune(tc.a), []rune(tc.b), 100); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNearMiss(t *testing.T) {
	t.Parallel()
	fields := []string{"name", "enabled", "manager", "capabilities", "mcps"}
	for _, tc := range []struct{ name, want string }{
		{"mpcs", "mcps"},
		{"MCPS", "mcps"},
		{"mcp", "mcps"},
		{"enable", "enabled"},
		{"capabilites", "capabilities"},
		{"managers", "manager"},
		{"description", ""},
		{"x", ""},
		{"ab", ""},
		{strings.Repeat("m", 100000), ""}, // bounded: not compared at all
	} {
		if got := NearMiss(tc.name, fields); got != tc.want {
			t.Errorf("NearMiss(%.20q) = %q; want %q", tc.name, got, tc.want)
		}
	}
}
