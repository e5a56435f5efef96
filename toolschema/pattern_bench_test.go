package toolschema

import (
	"regexp"
	"testing"
	"time"
)

// Patterns as a TypeScript server using zod 4 writes them. patternBenchRE2
// holds patterns Go's regexp runs as written (zod's uuid, ipv4, date, e164
// and base64url), patternBenchRewritten two that use "." and "\s", which
// RE2 runs written out with their ECMA-262 meaning.
var (
	patternBenchRE2 = []byte(`{
  "type": "object",
  "properties": {
    "id":    {"type": "string", "pattern": "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$"},
    "ip":    {"type": "string", "pattern": "^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])$"},
    "day":   {"type": "string", "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))$"},
    "phone": {"type": "string", "pattern": "^\\+[1-9]\\d{6,14}$"},
    "token": {"type": "string", "pattern": "^[A-Za-z0-9_-]*$"}
  }
}`)
	patternBenchRE2Args   = []byte(`{"id":"3f0e7c1a-9b2d-4c3e-8f4a-5b6c7d8e9f00","ip":"192.0.2.17","day":"2024-02-29","phone":"+14155550123","token":"a1B2_c3-D4"}`)
	patternBenchRewritten = []byte(`{
  "type": "object",
  "properties": {
    "title": {"type": "string", "pattern": "^.{1,64}$"},
    "words": {"type": "string", "pattern": "^\\S+(?:\\s\\S+)*$"}
  }
}`)
	patternBenchRewrittenArgs = []byte(`{"title":"Quarterly report, draft 3","words":"weather in paris"}`)
	// zod's hostname, email and duration patterns use lookahead: they run
	// on the backtracking engine, on a tracked copy of the schema.
	patternBenchECMA = []byte(`{
  "type": "object",
  "properties": {
    "host":  {"type": "string", "pattern": "^(?=.{1,253}\\.?$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[-0-9a-zA-Z]{0,61}[0-9a-zA-Z])?)*\\.?$"},
    "mail":  {"type": "string", "pattern": "^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"},
    "every": {"type": "string", "pattern": "^P(?:(\\d+W)|(?!.*W)(?=\\d|T\\d)(\\d+Y)?(\\d+M)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+([.,]\\d+)?S)?)?)$"}
  }
}`)
	patternBenchECMAArgs = []byte(`{"host":"api.example.com","mail":"joe.bloggs@example.com","every":"PT1H30M"}`)
)

// BenchmarkPatterns validates arguments against patterns on each path:
// RE2 as written (which matching with the backtracking engine besides
// must not slow), RE2 with "." and "\s" written out, and the backtracking
// engine on a tracked copy.
func BenchmarkPatterns(b *testing.B) {
	for _, tc := range []struct {
		name         string
		schema, args []byte
	}{
		{"RE2", patternBenchRE2, patternBenchRE2Args},
		{"RE2 rewritten", patternBenchRewritten, patternBenchRewrittenArgs},
		{"ECMAScript", patternBenchECMA, patternBenchECMAArgs},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Compile(tc.schema, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Validate(tc.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPatternsVsGo reads in one number what a match of ours costs
// against Go's regexp alone on the same pattern and strings, alternating
// short rounds as BenchmarkValidateVsRaw does: RE2 as written (zod's
// patterns above), and "." and "\s" written out for their ECMA-262
// meaning.
func BenchmarkPatternsVsGo(b *testing.B) {
	for _, tc := range []struct {
		name     string
		patterns []string
		values   []string
	}{
		{"RE2", []string{
			`^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$`,
			`^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])$`,
			`^\+[1-9]\d{6,14}$`, `^[A-Za-z0-9_-]*$`,
		}, []string{"3f0e7c1a-9b2d-4c3e-8f4a-5b6c7d8e9f00", "192.0.2.17", "+14155550123", "a1B2_c3-D4"}},
		{"RE2 rewritten", []string{`^.{1,64}$`, `^\S+(?:\s\S+)*$`}, []string{"Quarterly report, draft 3", "weather in paris"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ours []*boundedRegexp
			var gos []*regexp.Regexp
			for _, p := range tc.patterns {
				c, err := compilePattern(p, defaultLimits, nil)
				if err != nil || c.re == nil {
					b.Fatalf("%q: %v", p, err)
				}
				ours, gos = append(ours, c), append(gos, regexp.MustCompile(p))
			}
			const perRound = 200
			round := func(match func(i int, v string) bool) time.Duration {
				start := time.Now()
				for range perRound {
					for i, v := range tc.values {
						if !match(i, v) {
							b.Fatalf("%q does not match %q", tc.patterns[i], v)
						}
					}
				}
				return time.Since(start)
			}
			oursRound := func() time.Duration { return round(func(i int, v string) bool { return ours[i].MatchString(v) }) }
			goRound := func() time.Duration { return round(func(i int, v string) bool { return gos[i].MatchString(v) }) }
			b.ReportMetric(medianRatio(b, oursRound, goRound), "ours/go")
		})
	}
}
