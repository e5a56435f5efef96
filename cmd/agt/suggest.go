package main

import "github.com/agtsdk/agt/internal/suggest"

// didYouMean is suggest.NearMiss: one rule for every suggestion.
func didYouMean(word string, candidates []string) string {
	return suggest.NearMiss(word, candidates)
}

// suggestion is " (did you mean X?)" for the nearest candidate, or "".
func suggestion(word string, candidates []string) string {
	if s := didYouMean(word, candidates); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}
