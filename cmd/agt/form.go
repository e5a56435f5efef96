package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agtsdk/agt/run"
	"github.com/agtsdk/agt/toolschema"
)

// Elicitation on the terminal: a server's form (elicitation/create) is
// asked field by field on stderr and answered on stdin; each answer is
// checked against the field's schema by toolschema, the validator of tool
// arguments. Without a person to ask (--yes, no terminal on stdin, or
// stdin held the arguments) the request is declined, and stderr says how
// to answer it.

// Limits of a form asked on the terminal.
const (
	// maxFormFields bounds the fields of one form; a longer one is
	// declined.
	maxFormFields = 64
	// maxFieldTries bounds the answers to one field that do not fit its
	// schema; then the form is cancelled.
	maxFieldTries = 3
	// maxChoices bounds the choices of an enum shown on the terminal.
	maxChoices = 100
	// maxDeclineNotes bounds the notes of requests declined without a
	// person to ask; the rest are declined silently.
	maxDeclineNotes = 3
)

// elicitOnTerminal is the run.ClientFeatures.Elicit of agent call and
// agent tools (which makes no call, so it is never asked).
func (e *env) elicitOnTerminal(yes bool) func(ctx context.Context, from run.Origin, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, from run.Origin, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		t := &e.term
		t.mu.Lock()
		defer t.mu.Unlock()
		t.status.pause()
		defer t.status.resume()
		who := "server " + shown(string(from.Mount), maxCellWidth)
		if c, ok := from.Call(); ok {
			who += " (during " + shown(c.Alias, maxCellWidth) + ")"
		}
		if why := e.noPersonToAsk(yes); why != "" {
			// A server that asks again and again gets a few lines, not
			// one per request.
			switch t.declined++; {
			case t.declined <= maxDeclineNotes:
				fmt.Fprintf(e.err, "%s asks for input: %s\n  agt declined it: %s\n", who, shown(oneLine(p.Message, maxLineWidth), maxLineWidth), why)
			case t.declined == maxDeclineNotes+1:
				fmt.Fprintln(e.err, "agt declines the further requests for input of this call without a note")
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		if p.Mode == "url" {
			return e.askURL(ctx, who, p)
		}
		return e.askForm(ctx, who, p)
	}
}

// noPersonToAsk says why nobody can answer a question on the terminal,
// and how to answer it; "" when a person can.
func (e *env) noPersonToAsk(yes bool) string {
	switch {
	case yes:
		return "--yes answers no question; run the call on a terminal without --yes to answer it"
	case e.stdinTaken:
		return "stdin held the arguments (-); give them as JSON or @FILE and run the call on a terminal to answer it"
	case !e.inIsTTY:
		return "stdin is not a terminal; run the call on a terminal (without --yes) to answer it"
	}
	return ""
}

// askURL asks the person to open a URL (url-mode elicitation); agt opens
// nothing itself.
func (e *env) askURL(ctx context.Context, who string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fmt.Fprintf(e.err, "%s asks you to open a URL: %s\n  %s\n  (agt opens nothing: open it yourself if you trust it)\nDone? [y = done / n = decline / c = cancel] ",
		who, shown(oneLine(p.Message, maxLineWidth), maxLineWidth), shown(p.URL, maxLineWidth))
	return e.choose(ctx, func() *mcp.ElicitResult { return &mcp.ElicitResult{Action: "accept"} })
}

// choose reads y/n/c: y runs accept, n declines, c (or the end of stdin)
// cancels.
func (e *env) choose(ctx context.Context, accept func() *mcp.ElicitResult) (*mcp.ElicitResult, error) {
	line, err := e.term.input.readLine(ctx, e.in)
	if res, err := endOfAnswers(e, err); res != nil || err != nil {
		return res, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return accept(), nil
	case "c", "cancel":
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	fmt.Fprintln(e.err, "declined")
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// endOfAnswers turns a failed read into the form's end: the context's
// error, or cancel when stdin ended. A line too long is not an end
// (nil, nil).
func endOfAnswers(e *env, err error) (*mcp.ElicitResult, error) {
	switch {
	case err == nil, errors.Is(err, errLineTooLong):
		return nil, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintln(e.err)
		return nil, err
	case errors.Is(err, io.EOF):
		fmt.Fprintln(e.err, "\nstdin ended: the form is cancelled")
	default:
		fmt.Fprintln(e.err, "\nreading stdin failed: the form is cancelled")
	}
	return &mcp.ElicitResult{Action: "cancel"}, nil
}

// formField is one property of a requested schema.
type formField struct {
	name     string
	schema   *jsonschema.Schema
	raw      json.RawMessage // the property's schema, for toolschema
	required bool
	choices  []choice // an enum, a titled enum, or an array's items
}

// choice is one value of an enum, with the title shown for it.
type choice struct {
	value any
	title string
}

// askForm asks a form's fields one by one.
func (e *env) askForm(ctx context.Context, who string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fields, err := formFields(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(e.err, "%s asks for input that agt cannot ask on a terminal (%v): declined\n", who, err)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	fmt.Fprintf(e.err, "%s asks for input: %s\n", who, shown(oneLine(p.Message, maxLineWidth), maxLineWidth))
	if len(fields) == 0 {
		fmt.Fprint(e.err, "Answer? [y = accept / n = decline / c = cancel] ")
	} else {
		fmt.Fprintf(e.err, "Fill in the form (%d fields; an empty line keeps the default, Ctrl-D cancels)? [y = fill in / n = decline / c = cancel] ", len(fields))
	}
	res, err := e.choose(ctx, func() *mcp.ElicitResult { return nil })
	if res != nil || err != nil {
		return res, err
	}
	content := map[string]any{}
	for _, f := range fields {
		v, set, res, err := e.askField(ctx, f)
		if res != nil || err != nil {
			return res, err
		}
		if set {
			content[f.name] = v
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// formFields reads the properties of a requested schema, in name order.
func formFields(requested any) ([]formField, error) {
	b, err := json.Marshal(requested)
	if err != nil {
		return nil, errors.New("the schema cannot be read")
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if len(b) > 0 && string(b) != "null" {
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, errors.New("the schema is not an object")
		}
	}
	if len(s.Properties) > maxFormFields {
		return nil, fmt.Errorf("%d fields; agt asks at most %d", len(s.Properties), maxFormFields)
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	fields := make([]formField, 0, len(names))
	for _, n := range names {
		var fs jsonschema.Schema
		if err := json.Unmarshal(s.Properties[n], &fs); err != nil {
			return nil, errors.New("a field's schema cannot be read")
		}
		f := formField{name: n, schema: &fs, raw: s.Properties[n], required: slices.Contains(s.Required, n)}
		f.choices = choicesOf(&fs)
		if len(f.choices) > maxChoices {
			return nil, fmt.Errorf("a field has more than %d choices", maxChoices)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// choicesOf lists the values a field (or an array's items) may take, or
// nil when it is free.
func choicesOf(s *jsonschema.Schema) []choice {
	if s.Type == "array" && s.Items != nil {
		s = s.Items
	}
	var out []choice
	var names []any
	if s.Extra != nil {
		names, _ = s.Extra["enumNames"].([]any)
	}
	for i, v := range s.Enum {
		title := fmt.Sprint(v)
		if i < len(names) {
			title = fmt.Sprint(names[i])
		}
		out = append(out, choice{value: v, title: title})
	}
	for _, alt := range append(slices.Clone(s.OneOf), s.AnyOf...) {
		if alt != nil && alt.Const != nil {
			out = append(out, choice{value: *alt.Const, title: alt.Title})
		}
	}
	return out
}

// askField asks one field until its answer fits (at most maxFieldTries
// times). set is false for a field left empty: the server's default, if
// any, applies (agt sends none in its place). A non-nil res ends the form.
func (e *env) askField(ctx context.Context, f formField) (v any, set bool, res *mcp.ElicitResult, err error) {
	compiled, err := toolschema.CompileSchema(f.raw, nil)
	if err != nil {
		fmt.Fprintf(e.err, "field %s has a schema agt cannot check: the form is cancelled\n", shown(f.name, maxCellWidth))
		return nil, false, &mcp.ElicitResult{Action: "cancel"}, nil
	}
	label := shown(f.name, maxCellWidth)
	if f.schema.Title != "" {
		label = shown(oneLine(f.schema.Title, maxCellWidth), maxCellWidth) + " (" + label + ")"
	}
	kind := f.schema.Type
	if kind == "" {
		kind = "string"
	}
	hint := kind
	if f.schema.Format != "" {
		hint += ", " + shown(f.schema.Format, maxCellWidth)
	}
	if f.required {
		hint += ", required"
	}
	if f.schema.Description != "" {
		fmt.Fprintf(e.err, "  %s\n", shown(oneLine(f.schema.Description, maxLineWidth), maxLineWidth))
	}
	for i, c := range f.choices {
		fmt.Fprintf(e.err, "    %d) %s\n", i+1, shown(oneLine(c.title, maxCellWidth), maxCellWidth))
	}
	prompt := fmt.Sprintf("  %s [%s]", label, hint)
	if f.schema.Default != nil {
		prompt += fmt.Sprintf(" (default %s)", shown(string(f.schema.Default), maxCellWidth))
	}
	switch {
	case kind == "boolean":
		prompt += " y/n"
	case kind == "array" && len(f.choices) > 0:
		prompt += " numbers or values, separated by commas"
	case len(f.choices) > 0:
		prompt += " a number or a value"
	}
	for try := 0; try < maxFieldTries; try++ {
		fmt.Fprintf(e.err, "%s: ", prompt)
		line, err := e.term.input.readLine(ctx, e.in)
		if res, err := endOfAnswers(e, err); res != nil || err != nil {
			return nil, false, res, err
		}
		if err != nil { // errLineTooLong
			fmt.Fprintf(e.err, "  %v\n", err)
			continue
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if f.required && f.schema.Default == nil {
				fmt.Fprintln(e.err, "  this field is required")
				continue
			}
			return nil, false, nil, nil
		}
		v, why := parseAnswer(kind, line, f.choices)
		if why == "" {
			why = violationText(compiled, v)
		}
		if why == "" {
			return v, true, nil, nil
		}
		fmt.Fprintf(e.err, "  %s\n", why)
	}
	fmt.Fprintf(e.err, "%d answers to %s did not fit: the form is cancelled\n", maxFieldTries, label)
	return nil, false, &mcp.ElicitResult{Action: "cancel"}, nil
}

// parseAnswer reads a typed line as a value of kind; why says what is
// wrong, without repeating the line.
func parseAnswer(kind, line string, choices []choice) (v any, why string) {
	pick := func(s string) (any, bool) {
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(choices) {
			return choices[n-1].value, true
		}
		for _, c := range choices {
			if fmt.Sprint(c.value) == s || c.title == s {
				return c.value, true
			}
		}
		return nil, false
	}
	switch kind {
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true, ""
		case "n", "no", "false":
			return false, ""
		}
		return nil, "answer y or n"
	case "integer":
		n, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			return nil, "type a whole number"
		}
		return n, ""
	case "number":
		f, err := strconv.ParseFloat(line, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, "type a number"
		}
		return f, ""
	case "array":
		var out []any
		for _, part := range strings.Split(line, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if len(choices) == 0 {
				out = append(out, part)
				continue
			}
			v, ok := pick(part)
			if !ok {
				return nil, "each item must be one of the numbered choices"
			}
			out = append(out, v)
		}
		return out, ""
	}
	if len(choices) > 0 {
		v, ok := pick(line)
		if !ok {
			return nil, "pick one of the numbered choices"
		}
		return v, ""
	}
	return line, ""
}

// violationText is what the field's schema says of v, or "".
func violationText(s *toolschema.Schema, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "the value cannot be sent"
	}
	err = s.Validate(b)
	var ae *toolschema.ArgumentError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ae) && len(ae.Violations) > 0:
		msgs := make([]string, 0, len(ae.Violations))
		for _, v := range ae.Violations {
			msgs = append(msgs, v.Message)
		}
		return "the value " + strings.Join(msgs, "; ")
	}
	return "the value does not fit the field's schema"
}
