package resource

import "strings"

// maxSuggestLen bounds the names nearMiss compares: the distance costs
// len(a)*len(b) steps, and a longer name is no typo of a short field.
const maxSuggestLen = 64

// nearMiss returns the known name that name is probably a typo of (at
// most two edits away, case ignored, fewer edits than half its length),
// or "" when none is close.
func nearMiss(name string, known []string) string {
	if name == "" || len(name) > maxSuggestLen {
		return ""
	}
	lower := strings.ToLower(name)
	best, bestD := "", 3
	for _, k := range known {
		d := editDistance(lower, strings.ToLower(k))
		if d < bestD && 2*d < len(k) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b, in
// bytes: insertions, deletions, substitutions and swaps of two adjacent
// bytes ("mpcs" is one edit from "mcps").
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
