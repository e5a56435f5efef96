package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/agtsdk/agt/toolschema"
)

// CasesFile is the usual name of the business-case file beside a server.
const CasesFile = "mcp-contract.json"

// The values of Case.Expect.
const (
	ExpectResult = "result"
	ExpectError  = "error"
)

// Bounds of a business-case file.
const (
	maxCasesFileBytes = 1 << 20
	maxBusinessCases  = 1000
	maxCaseNameBytes  = 200
)

// Case is a business case: arguments whose answer the schema cannot know
// (an unknown article, a permission the caller lacks, the result of a
// valid call), and the answer expected. In a cases file:
//
//	{"cases": [
//	  {"tool": "reserve", "name": "unknown article",
//	   "arguments": {"sku": "QQQ-0000", "quantity": 1, "customer": "ada"},
//	   "expect": "error", "text": "unknown article"}
//	]}
type Case struct {
	// Tool is the tool to call.
	Tool string `json:"tool"`
	// Name names the case in reports; unique per tool.
	Name string `json:"name"`
	// Arguments are the call's arguments, a JSON object. Reports never
	// show them.
	Arguments json.RawMessage `json:"arguments"`
	// Expect is ExpectResult (the call succeeds) or ExpectError (the tool
	// refuses it).
	Expect string `json:"expect"`
	// Text must appear in the result's text and structured content (for
	// ExpectResult) or in the error's text (for ExpectError); "" matches
	// any.
	Text string `json:"text,omitempty"`
}

func (c *Case) check() error {
	switch {
	case c.Tool == "":
		return errors.New("tool is empty: set the tool the case calls")
	case c.Name == "" || len(c.Name) > maxCaseNameBytes || !utf8.ValidString(c.Name):
		return fmt.Errorf("name must be 1 to %d bytes of UTF-8", maxCaseNameBytes)
	case c.Expect != ExpectResult && c.Expect != ExpectError:
		return fmt.Errorf("expect must be %q or %q", ExpectResult, ExpectError)
	}
	if len(bytes.TrimSpace(c.Arguments)) == 0 {
		return nil // no arguments: {}
	}
	if _, err := decodeObject(c.Arguments); err != nil {
		return errors.New("arguments must be a JSON object")
	}
	return nil
}

// ReadCases reads a business-case file ({"cases": [...]}, see Case) of at
// most 1 MiB and 1000 cases, and checks each case.
func ReadCases(r io.Reader) ([]Case, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxCasesFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("contract: reading the cases: %w", err)
	}
	if len(b) > maxCasesFileBytes {
		return nil, fmt.Errorf("contract: the cases are over %d bytes", maxCasesFileBytes)
	}
	var doc struct {
		Cases []Case `json:"cases"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf(`contract: the cases are not a JSON object {"cases": [...]} of the documented fields: %w`, err)
	}
	if len(doc.Cases) > maxBusinessCases {
		return nil, fmt.Errorf("contract: more than %d cases", maxBusinessCases)
	}
	seen := map[[2]string]bool{}
	for i := range doc.Cases {
		c := &doc.Cases[i]
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("contract: cases[%d]: %w", i, err)
		}
		k := [2]string{c.Tool, c.Name}
		if seen[k] {
			return nil, fmt.Errorf("contract: cases[%d]: name repeats another case of the same tool: give each a name of its own", i)
		}
		seen[k] = true
	}
	return doc.Cases, nil
}

// ReadCasesFile reads the business-case file at path (see ReadCases).
func ReadCasesFile(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	defer f.Close()
	return ReadCases(f)
}

// businessCases are the Options.Business cases of tool, as cases to run.
func (r *runner) businessCases(tool string, s *toolschema.Schema) []genCase {
	var out []genCase
	for i := range r.o.Business {
		bc := &r.o.Business[i]
		if bc.Tool != tool {
			continue
		}
		args := bytes.TrimSpace(bc.Arguments)
		if len(args) == 0 {
			args = []byte("{}")
		}
		gc := genCase{name: "business: " + bc.Name, args: args, business: bc}
		gc.valid, gc.violation = verdict(s, args)
		out = append(out, gc)
	}
	return out
}

// verdict is the validator's judgement of args.
func verdict(s *toolschema.Schema, args []byte) (bool, toolschema.Violation) {
	err := s.Validate(args)
	if err == nil {
		return true, toolschema.Violation{}
	}
	var aerr *toolschema.ArgumentError
	if errors.As(err, &aerr) && len(aerr.Violations) > 0 {
		return false, aerr.Violations[0]
	}
	return false, toolschema.Violation{Message: "refused by the validator"}
}
