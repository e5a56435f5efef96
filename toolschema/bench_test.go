package toolschema

import (
	"bytes"
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
		rawCompile(b, benchSchema)
	}
}

// rawCompile compiles schema with the library alone, as the baselines do.
func rawCompile(tb testing.TB, schema []byte) *jsonschema.Schema {
	tb.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://bench/schema.json", doc); err != nil {
		tb.Fatal(err)
	}
	sch, err := c.Compile("mem://bench/schema.json")
	if err != nil {
		tb.Fatal(err)
	}
	return sch
}

// rawValidate is the baseline's per-call work: decode keeping number
// precision, then validate.
func rawValidate(sch *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(v)
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
	sch := rawCompile(b, benchSchema)
	run := func(b *testing.B, data []byte, wantValid bool) {
		b.ReportAllocs()
		for b.Loop() {
			if err := rawValidate(sch, data); (err == nil) != wantValid {
				b.Fatal(err)
			}
		}
	}
	b.Run("valid", func(b *testing.B) { run(b, benchValid, true) })
	b.Run("invalid", func(b *testing.B) { run(b, benchInvalid, false) })
}

// BenchmarkValidateVsRaw reads the ratio in one number on a shared machine:
// each iteration runs a short round of Validate and one of the raw library
// on the same bytes, alternating which goes first so that load and garbage
// hit both alike, and the benchmark reports the median ratio ours/raw.
func BenchmarkValidateVsRaw(b *testing.B) {
	s, err := Compile(benchSchema, nil)
	if err != nil {
		b.Fatal(err)
	}
	sch := rawCompile(b, benchSchema)
	const perRound = 50
	for _, tc := range []struct {
		name string
		data []byte
	}{{"valid", benchValid}, {"invalid", benchInvalid}} {
		b.Run(tc.name, func(b *testing.B) {
			ours := func() time.Duration {
				start := time.Now()
				for range perRound {
					_ = s.Validate(tc.data)
				}
				return time.Since(start)
			}
			raw := func() time.Duration {
				start := time.Now()
				for range perRound {
					_ = rawValidate(sch, tc.data)
				}
				return time.Since(start)
			}
			b.ReportMetric(medianRatio(b, ours, raw), "ours/raw")
		})
	}
}

// medianRatio runs a round of ours and one of base per iteration,
// alternating which goes first so that load and garbage hit both alike,
// and returns the median ratio ours/base.
func medianRatio(b *testing.B, ours, base func() time.Duration) float64 {
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		var o, r time.Duration
		if i%2 == 0 {
			o, r = ours(), base()
		} else {
			r, o = base(), ours()
		}
		ratios = append(ratios, float64(o)/float64(r))
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2]
}
