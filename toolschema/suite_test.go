package toolschema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agtsdk/agt/internal/runtest/need"
)

// The official JSON-Schema-Test-Suite (SPEC R8.1), run through CompileSchema
// and Validate. See suiteExclusions for the only cases not asserted as the
// suite says, each with its reason.

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []suiteCase     `json:"tests"`
}

type suiteCase struct {
	Description string          `json:"description"`
	Data        json.RawMessage `json:"data"`
	Valid       bool            `json:"valid"`
}

var suiteDrafts = []struct {
	dir     string
	dialect string
	draft   *jsonschema.Draft
	// formatAsserted: whether optional/format is asserted in this dialect
	// (SPEC R6.6); otherwise format is an annotation and every instance of
	// optional/format is valid.
	formatAsserted bool
}{
	{"draft2020-12", dialect2020, jsonschema.Draft2020, false},
	{"draft2019-09", dialect2019, jsonschema.Draft2019, false},
	{"draft7", dialect7, jsonschema.Draft7, true},
	{"draft6", dialect6, jsonschema.Draft6, true},
	{"draft4", dialect4, jsonschema.Draft4, true},
}

// suiteDir locates the suite: $JSON_SCHEMA_TEST_SUITE, else
// ../shared/testdata/json-schema-test-suite beside the repository root. It
// skips when the suite is missing, and fails when CI=true.
func suiteDir(t testing.TB) string {
	t.Helper()
	if dir, ok := locateSuite(); ok {
		return dir
	}
	need.Missing(t, "the JSON-Schema-Test-Suite", "set JSON_SCHEMA_TEST_SUITE to a checkout of the JSON-Schema-Test-Suite (.ci/run takes ../shared/testdata/json-schema-test-suite)")
	return ""
}

func locateSuite() (string, bool) {
	dir := os.Getenv("JSON_SCHEMA_TEST_SUITE")
	if dir == "" {
		if root, err := repoRoot(); err == nil {
			dir = filepath.Join(root, "..", "shared", "testdata", "json-schema-test-suite")
		}
	}
	if dir == "" {
		return "", false
	}
	fi, err := os.Stat(filepath.Join(dir, "tests"))
	return dir, err == nil && fi.IsDir()
}

func TestLocateSuite(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("JSON_SCHEMA_TEST_SUITE", empty)
	if _, ok := locateSuite(); ok {
		t.Error("an empty directory was taken for the suite")
	}
	if err := os.Mkdir(filepath.Join(empty, "tests"), 0o700); err != nil {
		t.Fatal(err)
	}
	if dir, ok := locateSuite(); !ok || dir != empty {
		t.Errorf("locateSuite() = %q, %v; want %q, true", dir, ok, empty)
	}
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// withDialect adds the draft's $schema to a root object that has none, so
// that older drafts' files (which omit it) compile in their own dialect.
func withDialect(t testing.TB, raw json.RawMessage, dialect string) []byte {
	t.Helper()
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return trimmed
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		t.Fatalf("suite schema: %v", err)
	}
	if _, ok := obj["$schema"]; ok {
		return trimmed
	}
	if len(obj) == 0 {
		return []byte(`{"$schema":"` + dialect + `"}`)
	}
	return append([]byte(`{"$schema":"`+dialect+`",`), trimmed[1:]...)
}

type suiteFile struct {
	rel      string // such as "draft7/ref.json" or "draft7/optional/format/email.json"
	path     string
	isFormat bool
}

func suiteFiles(t *testing.T, dir, draft string) []suiteFile {
	t.Helper()
	var files []suiteFile
	base := filepath.Join(dir, "tests", draft)
	top, err := filepath.Glob(filepath.Join(base, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	formats, err := filepath.Glob(filepath.Join(base, "optional", "format", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range top {
		files = append(files, suiteFile{rel: draft + "/" + filepath.Base(p), path: p})
	}
	for _, p := range formats {
		files = append(files, suiteFile{rel: draft + "/optional/format/" + filepath.Base(p), path: p, isFormat: true})
	}
	// Patterns are ECMA-262 (issue 24 item 1): its optional tests hold too.
	for _, name := range []string{"ecmascript-regex.json", "non-bmp-regex.json"} {
		p := filepath.Join(base, "optional", name)
		if _, err := os.Stat(p); err == nil {
			files = append(files, suiteFile{rel: draft + "/optional/" + name, path: p})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files
}

// suiteExpectation says how a whole group must compile, derived without our
// package: the raw library compiles the schema with a loader that serves
// the suite's remotes and records every load.
type suiteExpectation int

const (
	expectCompiles suiteExpectation = iota
	expectExternalRef
	expectUnsupportedDialect
)

type recordingLoader struct {
	remotes string
	loads   []string
}

func (l *recordingLoader) Load(u string) (any, error) {
	l.loads = append(l.loads, u)
	rel, ok := strings.CutPrefix(u, "http://localhost:1234/")
	if !ok {
		return nil, errors.New("not a suite remote")
	}
	f, err := os.Open(filepath.Join(l.remotes, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jsonschema.UnmarshalJSON(f)
}

func expectationOf(t *testing.T, remotes string, schema []byte, draft *jsonschema.Draft) suiteExpectation {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("suite schema: %v", err)
	}
	if hasNonStandardSchema(doc) {
		return expectUnsupportedDialect
	}
	l := &recordingLoader{remotes: remotes}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	c.UseLoader(l)
	// Only the references matter here: Go's regexp cannot compile every
	// ECMA-262 pattern of the suite.
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) { return anyPattern(s), nil })
	const loc = "http://suite.invalid/schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		t.Fatalf("raw AddResource: %v", err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		t.Fatalf("raw library cannot compile a suite schema: %v", err)
	}
	if len(l.loads) > 0 || reachesOutside(sch, "http://suite.invalid/") {
		return expectExternalRef
	}
	return expectCompiles
}

// anyPattern is a Regexp that compiles anything and matches everything.
type anyPattern string

func (p anyPattern) String() string        { return string(p) }
func (anyPattern) MatchString(string) bool { return true }

// hasNonStandardSchema reports a "$schema" string anywhere in the document
// (a crude scan: the suite puts $schema only in schema positions) that is
// not one of the five standard dialects.
func hasNonStandardSchema(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "$schema" {
				if _, std := standardDialect(s); !std {
					return true
				}
			}
			if hasNonStandardSchema(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasNonStandardSchema(e) {
				return true
			}
		}
	}
	return false
}

// reachesOutside reports whether the compiled graph reaches a schema whose
// location is not under prefix, such as an embedded meta-schema.
func reachesOutside(root *jsonschema.Schema, prefix string) bool {
	seen := map[*jsonschema.Schema]bool{}
	stack := []*jsonschema.Schema{root}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] {
			continue
		}
		seen[s] = true
		if strings.Contains(s.Location, "json-schema.org/") {
			return true
		}
		children(s, func(sub *jsonschema.Schema, _ bool) { stack = append(stack, sub) })
	}
	return false
}

type suiteCounts struct {
	groups, cases, passed, externalRef, unsupportedDialect, excluded, formatAnnotation int
}

func TestJSONSchemaTestSuite(t *testing.T) {
	dir := suiteDir(t)
	remotes := filepath.Join(dir, "remotes")
	usedExclusions := map[string]bool{}
	for _, d := range suiteDrafts {
		var n suiteCounts
		for _, f := range suiteFiles(t, dir, d.dir) {
			data, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			var groups []suiteGroup
			if err := json.Unmarshal(data, &groups); err != nil {
				t.Fatalf("%s: %v", f.rel, err)
			}
			for _, g := range groups {
				n.groups++
				schema := withDialect(t, g.Schema, d.dialect)
				groupKey := f.rel + "|" + g.Description + "|"
				want := expectationOf(t, remotes, schema, d.draft)
				s, err := CompileSchema(schema, nil)
				switch want {
				case expectExternalRef, expectUnsupportedDialect:
					sentinel := ErrExternalRef
					if want == expectUnsupportedDialect {
						sentinel = ErrUnsupportedDialect
					}
					if !errors.Is(err, sentinel) {
						t.Errorf("%s: CompileSchema = %v, want %v (SPEC R6.5, R6.1)", groupKey, err, sentinel)
						continue
					}
					n.cases += len(g.Tests)
					if want == expectExternalRef {
						n.externalRef += len(g.Tests)
					} else {
						n.unsupportedDialect += len(g.Tests)
						t.Logf("%s: refused as an unsupported dialect (its $schema names a custom meta-schema)", groupKey)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: CompileSchema: %v", groupKey, err)
					continue
				}
				for _, c := range g.Tests {
					n.cases++
					key := groupKey + c.Description
					wantValid := c.Valid
					if f.isFormat && !d.formatAsserted {
						wantValid = true // SPEC R6.6: annotation only
						n.formatAnnotation++
					}
					verr := s.Validate(c.Data)
					// The tracked copy that costly calls run on answers the same.
					if terr := validateOnTwin(s, c.Data); fmt.Sprint(terr) != fmt.Sprint(verr) {
						t.Errorf("%s: on a tracked copy %v, shared %v", key, terr, verr)
					}
					exclusionKey := strings.TrimPrefix(key, d.dir+"/")
					if _, ok := suiteExclusions[exclusionKey]; ok && f.isFormat && (verr == nil) != wantValid {
						usedExclusions[exclusionKey] = true
						n.excluded++
						continue
					}
					if (verr == nil) != wantValid {
						t.Errorf("%s: valid=%v, want %v (err %v)", key, verr == nil, wantValid, verr)
						continue
					}
					if verr != nil {
						var aerr *ArgumentError
						if !errors.As(verr, &aerr) {
							t.Errorf("%s: error %T, want *ArgumentError", key, verr)
							continue
						}
						if leak := leakedValue(schema, c.Data, aerr); leak != "" {
							t.Errorf("%s: error text contains argument value %q (SPEC R6.7): %v", key, leak, aerr)
						}
					}
					n.passed++
				}
			}
		}
		t.Logf("%s: %d groups, %d cases: %d passed, %d refused as external references, %d refused as unsupported dialects, %d excluded (%d of the passed are format annotations)",
			d.dir, n.groups, n.cases, n.passed, n.externalRef, n.unsupportedDialect, n.excluded, n.formatAnnotation)
		if n.cases == 0 {
			t.Errorf("%s: no cases found", d.dir)
		}
	}
	for key := range suiteExclusions {
		if !usedExclusions[key] {
			t.Errorf("exclusion %q: no draft diverges from the suite any more; remove it", key)
		}
	}
}

// leakedValue returns a string value or number literal of the instance, of
// 3 or more characters, that appears in the error text although it occurs
// neither in the schema nor as a field name of the instance (field names
// may appear in paths).
func leakedValue(schema []byte, data json.RawMessage, aerr *ArgumentError) string {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	var values []string
	keys := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			values = append(values, v)
		case json.Number:
			values = append(values, v.String())
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				keys[k] = true
				walk(e)
			}
		}
	}
	walk(v)
	// Paths hold property names and array indexes, never values (an index
	// or a name may contain a number value's digits); the rest of Error is
	// fixed text and the violations.
	var text strings.Builder
	for _, v := range aerr.Violations {
		text.WriteString(v.SchemaPath + "\n" + v.Message + "\n")
	}
	for _, val := range values {
		if len(val) < 3 || keys[val] || bytes.Contains(schema, []byte(val)) {
			continue
		}
		if strings.Contains(text.String(), val) {
			return val
		}
	}
	return ""
}

// validateOnTwin is Validate forced onto a tracked copy of the schema.
func validateOnTwin(s *Schema, args []byte) error {
	d := decoder{data: args, maxDepth: s.limits.depth, maxNumberLength: maxNumberLength, maxExponent: maxExponent, uniqueKeys: true, validText: true}
	v, err := d.document()
	if err != nil {
		return argumentDecodeError(err, s.limits.depth)
	}
	return s.validateTracked(context.Background(), v)
}
