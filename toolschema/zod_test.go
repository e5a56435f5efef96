package toolschema

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// zodPatterns are the regular expressions zod 4 writes as "pattern" into
// the JSON Schema of a TypeScript server (packages/zod/src/v4/core/regexes.ts
// of colinhacks/zod, v4.3.6 and the later rewrite where noted), with values
// each must accept and refuse.
var zodPatterns = []struct {
	name, pattern   string
	valid, invalid  []string
	needsBacktracks bool // lookaround, or a property Go's regexp lacks
}{
	{"hostname", `^(?=.{1,253}\.?$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[-0-9a-zA-Z]{0,61}[0-9a-zA-Z])?)*\.?$`,
		[]string{"example.com", "a", "localhost.", "xn--bcher-kva.example", strings.Repeat("a.", 126) + "a"},
		[]string{"", "-a.com", "a..b", "a_b.com", strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 127) + "a", "exa mple.com"}, true},
	{"domain (later)", `^(?=.{1,253}$)([a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,63}$`,
		[]string{"example.com", "a.b.example.org"},
		[]string{"example", "example.c", "-a.example.com", strings.Repeat("a.", 126) + "com"}, true},
	{"duration", `^P(?:(\d+W)|(?!.*W)(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?)$`,
		[]string{"P1D", "PT1H30M", "P2W", "P1Y2M3DT4H5M6.5S", "PT0,5S"},
		[]string{"P", "PT", "P1W2D", "1D", "P1DT", "P1.5D", "p1d"}, true},
	{"extended duration", `^[-+]?P(?!$)(?:(?:[-+]?\d+Y)|(?:[-+]?\d+[.,]\d+Y$))?(?:(?:[-+]?\d+M)|(?:[-+]?\d+[.,]\d+M$))?(?:(?:[-+]?\d+W)|(?:[-+]?\d+[.,]\d+W$))?(?:(?:[-+]?\d+D)|(?:[-+]?\d+[.,]\d+D$))?(?:T(?=[\d+-])(?:(?:[-+]?\d+H)|(?:[-+]?\d+[.,]\d+H$))?(?:(?:[-+]?\d+M)|(?:[-+]?\d+[.,]\d+M$))?(?:[-+]?\d+(?:[.,]\d+)?S)?)??$`,
		[]string{"P1D", "-P1Y2W", "P1.5D", "PT-3H"},
		[]string{"P", "-P", "P1.5DT1H", "1D"}, true},
	{"email", `^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`,
		[]string{"joe.bloggs@example.com", "o'neil+tag@mail.example.org"},
		[]string{".joe@example.com", "jo..e@example.com", "joe@example", "joe.@example.com", "joe@-example.com"}, true},
	{"emoji", `^(\p{Extended_Pictographic}|\p{Emoji_Component})+$`,
		[]string{"😀", "👍🏽", "🇫🇷", "😀😀"},
		[]string{"", "a", "😀a", "é"}, true},
	{"emoji (later)", `^[\p{Extended_Pictographic}\p{Emoji_Component}]+$`,
		[]string{"😀", "👍🏽"},
		[]string{"", "a", "😀a"}, true},
	{"uuid", `^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$`,
		[]string{"3f0e7c1a-9b2d-4c3e-8f4a-5b6c7d8e9f00", "00000000-0000-0000-0000-000000000000"},
		[]string{"3f0e7c1a-9b2d-9c3e-8f4a-5b6c7d8e9f00", "3f0e7c1a9b2d4c3e8f4a5b6c7d8e9f00"}, false},
	{"unicode email", `^[^\s@"]{1,64}@[^\s@]{1,255}$`,
		[]string{"jöe@bücher.example", "a@b"},
		[]string{"a b@c", "a@b\u00a0c", "a@b\u2028", "@b"}, false},
	{"html5 email", "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$",
		[]string{"joe@example.com", "a.b!c@d"},
		[]string{"joe@", "joe@-a.com", "jöe@example.com"}, false},
	{"ipv4", `^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])$`,
		[]string{"192.0.2.1", "255.255.255.255"},
		[]string{"256.0.0.1", "01.2.3.4", "1.2.3"}, false},
	{"mac", `^(?:[0-9A-F]{2}:){5}[0-9A-F]{2}$|^(?:[0-9a-f]{2}:){5}[0-9a-f]{2}$`,
		[]string{"00:1A:2B:3C:4D:5E", "00:1a:2b:3c:4d:5e"},
		[]string{"00:1A:2b:3C:4D:5E", "00-1A-2B-3C-4D-5E"}, false},
	{"base64", `^$|^(?:[0-9a-zA-Z+/]{4})*(?:(?:[0-9a-zA-Z+/]{2}==)|(?:[0-9a-zA-Z+/]{3}=))?$`,
		[]string{"", "aGVsbG8=", "aGk="},
		[]string{"aGVsbG8", "a==="}, false},
	{"date", `^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))$`,
		[]string{"2024-02-29", "2023-12-31"},
		[]string{"2023-02-29", "2023-04-31", "2023-1-01"}, false},
	{"string with length", `^[\s\S]{0,5}$`,
		[]string{"", "a\nb\rc", "\u2028\u2029"},
		[]string{"abcdef"}, false},
	{"e164", `^\+[1-9]\d{6,14}$`,
		[]string{"+14155550123"},
		[]string{"14155550123", "+04155550123", "+1"}, false},
	// Not valid in Unicode mode (a lone "]"): Go's regexp reads it alike.
	{"rfc5322 email", `^(([^<>()\[\]\\.,;:\s@"]+(\.[^<>()\[\]\\.,;:\s@"]+)*)|(".+"))@((\[[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}])|(([a-zA-Z\-0-9]+\.)+[a-zA-Z]{2,}))$`,
		[]string{"joe@example.com", `"j e"@[192.0.2.1]`},
		[]string{"joe@", "j e@example.com"}, false},
}

// Issue 24 item 1: every pattern zod 4 writes compiles, on RE2 where RE2
// can run it, and accepts and refuses what it should. Before, Go's regexp
// alone compiled those without lookaround and without Unicode properties
// it lacks; a tool whose schema held another was left out.
func TestZodPatterns(t *testing.T) {
	t.Parallel()
	before, onRE2 := 0, 0
	for _, z := range zodPatterns {
		if _, err := regexp.Compile(z.pattern); err == nil {
			before++
		}
		raw, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string", "pattern": z.pattern}}})
		s, err := Compile(raw, nil)
		if err != nil {
			t.Errorf("%s: %v", z.name, err)
			continue
		}
		b := s.compiled.Properties["v"].Pattern.(*boundedRegexp)
		if (b.bt != nil) != z.needsBacktracks {
			t.Errorf("%s: on the backtracking engine %v, want %v", z.name, b.bt != nil, z.needsBacktracks)
		}
		if b.re != nil {
			onRE2++
		}
		for _, v := range z.valid {
			args, _ := json.Marshal(map[string]string{"v": v})
			if err := s.Validate(args); err != nil {
				t.Errorf("%s: %q refused: %v", z.name, v, err)
			}
		}
		for _, v := range z.invalid {
			args, _ := json.Marshal(map[string]string{"v": v})
			want := []Violation{{Path: "/v", SchemaPath: "#/properties/v/pattern", Message: "must match pattern " + strconv.Quote(z.pattern)}}
			if diff := cmp.Diff(want, violationsOf(t, s.Validate(args))); diff != "" {
				t.Errorf("%s: %q (-want +got):\n%s", z.name, v, diff)
			}
		}
		// The format "regex" check agrees that the pattern is ECMA-262,
		// but for the one zod writes without the "u" flag.
		if got := isECMARegex(z.pattern); got != (z.name != "rfc5322 email") {
			t.Errorf("%s: format regex says %v", z.name, got)
		}
	}
	t.Logf("%d zod patterns: %d compiled before (Go's regexp), %d now (%d on RE2, %d on the backtracking engine)", len(zodPatterns), before, len(zodPatterns), onRE2, len(zodPatterns)-onRE2)
}
