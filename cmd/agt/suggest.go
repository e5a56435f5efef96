package main

import "github.com/agtsdk/agt/resource"

// didYouMean is resource.NearMiss: one rule for every suggestion.
func didYouMean(word string, candidates []string) string {
	return resource.NearMiss(word, candidates)
}

// suggestion is " (did you mean X?)" for the nearest candidate, or "".
func suggestion(word string, candidates []string) string {
	if s := didYouMean(word, candidates); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}
