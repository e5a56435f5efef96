// Package oaiconv holds what the two OpenAI adapters, agtopenai (Chat
// Completions) and agtresponses (Responses), share and the other
// adapters do not: the parameters a model refuses, for a sampling request
// asked again without them, a refusal of the model, the stop reason of
// a content filter.
package oaiconv

import (
	"errors"

	"github.com/openai/openai-go/v3"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
)

// UnsupportedParam is the request parameter the API refused for this
// model (a 400 with code unsupported_parameter or unsupported_value),
// "temperature" or "stop" only: the sampling parameters a server asks for
// that reasoning models refuse (they take neither, or only the default).
// It is "" for any other error.
func UnsupportedParam(err error) string {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 ||
		(apiErr.Code != "unsupported_parameter" && apiErr.Code != "unsupported_value") {
		return ""
	}
	switch apiErr.Param {
	case "temperature", "stop":
		return apiErr.Param
	}
	return ""
}

// ErrModelRefused is a sampling request the model refused (a refusal in
// its answer): the server reads that the model refused, not the
// refusal's text, and does not take the refusal for the model's answer.
var ErrModelRefused = modelconv.SampleRefusal("the model refused to answer")

// StopContentFilter is the stop reason of an answer a content filter cut,
// as OpenAI names it: MCP names no such reason, and the text is what the
// filter left.
const StopContentFilter = "content_filter"
