package toolschema

import (
	"bytes"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A typical tool input schema: eight properties of several kinds.
var benchSchema = []byte(`{
  "type": "object",
  "properties": {
    "query":    {"type": "string", "minLength": 1, "maxLength": 200},
    "limit":    {"type": "integer", "minimum": 1, "maximum": 100},
    "offset":   {"type": "integer", "minimum": 0},
    "sort":     {"enum": ["asc", "desc"]},
    "tags":     {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 10, "uniqueItems": true},
    "exact":    {"type": "boolean"},
    "since":    {"type": "string", "format": "date-time"},
    "filter":   {"type": "object", "properties": {"field": {"type": "string"}, "value": {"type": ["string", "number"]}}, "required": ["field"], "additionalProperties": false}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

var (
	benchValid   = []byte(`{"query":"weather in paris","limit":10,"offset":0,"sort":"desc","tags":["news","weather"],"exact":false,"since":"2026-01-02T03:04:05Z","filter":{"field":"city","value":"paris"}}`)
	benchInvalid = []byte(`{"query":"","limit":1000,"offset":0,"sort":"up","tags":["News","weather"],"exact":false,"since":"2026-01-02T03:04:05Z","filter":{"value":"paris"}}`)
)

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(benchSchema, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawCompile is the baseline of BenchmarkCompile: the library alone
// decoding and compiling the same schema, without the offline, dialect,
// cycle and expansion checks.
func BenchmarkRawCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(benchSchema))
		if err != nil {
			b.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mem://bench/schema.json", doc); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Compile("mem://bench/schema.json"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	s, err := Compile(benchSchema, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Validate(benchValid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Validate(benchInvalid); err == nil {
				b.Fatal("no error")
			}
		}
	})
}

// BenchmarkRawValidator is the baseline: the library alone decoding the same
// bytes (keeping number precision) and validating them against the same
// schema, without rendering its error.
func BenchmarkRawValidator(b *testing.B) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://bench/schema.json", doc); err != nil {
		b.Fatal(err)
	}
	sch, err := c.Compile("mem://bench/schema.json")
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, data []byte, wantValid bool) {
		b.ReportAllocs()
		for b.Loop() {
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			if err := sch.Validate(v); (err == nil) != wantValid {
				b.Fatal(err)
			}
		}
	}
	b.Run("valid", func(b *testing.B) { run(b, benchValid, true) })
	b.Run("invalid", func(b *testing.B) { run(b, benchInvalid, false) })
}

// TestRatioAgainstRaw measures Validate against the raw library in
// alternating short rounds, so that load from other processes hits both
// alike, and logs the median ratio per path. It asserts nothing (timing on
// a shared machine is not a pass/fail signal) and runs only on request:
//
//	TOOLSCHEMA_RATIO=1 go test -run TestRatioAgainstRaw -v ./toolschema
func TestRatioAgainstRaw(t *testing.T) {
	if os.Getenv("TOOLSCHEMA_RATIO") == "" {
		t.Skip("set TOOLSCHEMA_RATIO=1 to measure")
	}
	s, err := Compile(benchSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(benchSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://bench/schema.json", doc); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Compile("mem://bench/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	const rounds, perRound = 301, 200
	for _, tc := range []struct {
		name string
		data []byte
	}{{"valid", benchValid}, {"invalid", benchInvalid}} {
		ratios := make([]float64, 0, rounds)
		oursRound := func() time.Duration {
			start := time.Now()
			for range perRound {
				_ = s.Validate(tc.data)
			}
			return time.Since(start)
		}
		rawRound := func() time.Duration {
			start := time.Now()
			for range perRound {
				v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(tc.data))
				_ = raw.Validate(v)
			}
			return time.Since(start)
		}
		for i := range rounds {
			// Alternate which side goes first, so that garbage one side
			// leaves behind is collected on both sides' time alike.
			var ours, theirs time.Duration
			if i%2 == 0 {
				ours, theirs = oursRound(), rawRound()
			} else {
				theirs, ours = rawRound(), oursRound()
			}
			ratios = append(ratios, float64(ours)/float64(theirs))
		}
		slices.Sort(ratios)
		t.Logf("%s: median ratio Validate/raw = %.2f (quartiles %.2f-%.2f, %d rounds of %d calls each)",
			tc.name, ratios[rounds/2], ratios[rounds/4], ratios[3*rounds/4], rounds, perRound)
	}
}
