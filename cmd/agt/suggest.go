package main

import (
	"github.com/agtsdk/agt/internal/suggest"
	"github.com/agtsdk/agt/run"
)

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

// toolSuggestion is the alias of the tool a name typed for agent call
// most likely means, or "". Besides the aliases, it knows the names a
// person predicts for a server's tool, mcp__REF__TOOL (a category's '/'
// written '_'), with REF as registered and by the naming rule: where the
// alias differs (it carries a hash for a reference with '_' or '.', or a
// tool name that had to change), the alias is what is suggested.
func toolSuggestion(typed string, tools []run.ToolInfo) string {
	names := make([]string, 0, 3*len(tools))
	alias := map[string]string{}
	for _, t := range tools {
		names = append(names, t.Name)
		if t.Source.Kind != run.SourceMCP {
			continue
		}
		predicted := []string{aliasPrefix(t.Source.Ref) + t.Source.Tool}
		if ref, changed, err := normalRef(string(t.Source.Ref)); err == nil && changed {
			predicted = append(predicted, aliasPrefix(ref)+t.Source.Tool)
		}
		for _, p := range predicted {
			if _, dup := alias[p]; !dup && p != t.Name {
				alias[p] = t.Name
				names = append(names, p)
			}
		}
	}
	if a, ok := alias[typed]; ok {
		return a
	}
	near := didYouMean(typed, names)
	if a, ok := alias[near]; ok {
		return a
	}
	return near
}
