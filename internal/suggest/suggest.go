package suggest

import (
	"strings"
	"unicode/utf8"
)

// Bounds on "did you mean": what is compared is short, so a store with
// thousands of tools costs milliseconds.
const (
	maxSuggestRunes      = 128   // runes of a word or candidate compared; longer ones are not suggested
	maxSuggestCandidates = 10000 // candidates looked at; the rest are not
)

// NearMiss returns the candidate nearest to word by edit distance, or ""
// when none is near enough to be a likely typo: at most 1 edit for words of
// up to 4 characters, 2 up to 8, 3 beyond. Case differences count as no
// edit. An exact match is not a suggestion.
func NearMiss(word string, candidates []string) string {
	if word == "" || utf8.RuneCountInString(word) > maxSuggestRunes {
		return ""
	}
	n := utf8.RuneCountInString(word)
	limit := 1
	switch {
	case n > 8:
		limit = 3
	case n > 4:
		limit = 2
	}
	best, bestDist := "", limit+1
	lw := []rune(strings.ToLower(word))
	for i, c := range candidates {
		if i == maxSuggestCandidates {
			break
		}
		if c == word || c == "" || utf8.RuneCountInString(c) > maxSuggestRunes {
			continue
		}
		if d := editDistance(lw, []rune(strings.ToLower(c)), bestDist); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b with adjacent
// transpositions counted as one edit (optimal string alignment). It stops
// early, returning bound, once the distance is known to be at least bound.
func editDistance(a, b []rune, bound int) int {
	if d := len(a) - len(b); d >= bound || -d >= bound {
		return bound
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin >= bound {
			return bound
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], bound)
}
