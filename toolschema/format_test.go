package toolschema

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Focused cases per format checker (SPEC R6.6), beyond the
// JSON-Schema-Test-Suite: where IDNA2008 and UTS #46 differ, RFC 3986 and
// RFC 6570 corners, and the input bounds.

type formatCase struct {
	in   string
	want bool
}

func checkFormat(t *testing.T, name string, valid func(string) bool, tests []formatCase) {
	t.Helper()
	for _, tt := range tests {
		if got := valid(tt.in); got != tt.want {
			t.Errorf("%s %q = %v, want %v", name, tt.in, got, tt.want)
		}
	}
}

func TestFormatHostname(t *testing.T) {
	t.Parallel()
	checkFormat(t, "hostname", func(s string) bool { return isHostname(s, false) }, []formatCase{
		{"example.com", true},
		{"EXAMPLE.COM", true},
		{"a", true},
		{"ab--cd.example", true}, // RFC 1123 allows it; idn-hostname reserves "--"
		{"xn--9n2bp8q.xn--9t4b11yi5a", true},
		{"XN--9N2BP8Q.XN--9T4B11YI5A", true}, // A-labels compare case-insensitively
		{"xn--bcher-kva.ch", true},           // bücher
		{"xn--fa-hia.de", true},              // faß: ß is PVALID by exception
		{"xn--nxasmm1c.example", true},       // βόλος
		{strings.Repeat("a", 63) + ".com", true},
		{strings.Repeat("a.", 126) + "a", true}, // 253 octets
		{strings.Repeat("a.", 127) + "a", false},
		{strings.Repeat("a.", 127), false}, // trailing dot
		{strings.Repeat("a", 64), false},
		{"", false},
		{"a..b", false},
		{"-a.com", false},
		{"a-.com", false},
		{"a_b.com", false},
		{"a b.com", false},
		{"b\u00fccher.ch", false}, // U-labels only in idn-hostname
		{"xn--", false},
		{"xn--a", false},            // U+0080, a control
		{"xn--7a", false},           // U+00A1, punctuation: DISALLOWED in IDNA2008
		{"xn--qei.com", false},      // U+2764, valid in UTS #46 but DISALLOWED in IDNA2008
		{"xn--ls8h.com", false},     // U+1F4A9, a symbol
		{"xn--abc-ww0a.com", false}, // U+2060 WORD JOINER, default ignorable
		{"xn--ab-j1t.com", false},   // ZWNJ between two Latin letters: CONTEXTJ fails
		{"xn--example-", false},     // decodes to ASCII only
		{"xn---9uc", false},         // not the canonical encoding
	})
}

func TestFormatIDNHostname(t *testing.T) {
	t.Parallel()
	checkFormat(t, "idn-hostname", func(s string) bool { return isHostname(s, true) }, []formatCase{
		{"b\u00fccher.ch", true},
		{"\u65e5\u672c\u8a9e\u3002jp", true}, // 日本語。jp
		{"\u00e0.\u05d0", true},              // a Bidi domain whose LTR label satisfies rule 5
		{"\u0627\u0628.example", true},
		{"\u0915\u094d\u200d\u0937", true}, // ZWJ after a virama
		{"ab--cd", false},                  // reserved LDH label
		{"B\u00fccher.ch", false},          // uppercase ASCII is DISALLOWED inside a U-label (only LDH labels ignore case)
		{"\u00dcber.example", false},       // Ü: unstable under case folding, DISALLOWED
		{"u\u0308ber.example", false},      // not NFC
		{"\u2764.com", false},              // a symbol
		{"a\u00a9b", false},                // © is DISALLOWED
		{"ab\u2060c", false},               // WORD JOINER
		{"a\u200cb", false},                // ZWNJ without context
		{"\u1100\u1161", false},            // conjoining Hangul jamo
		{"a\u20d0", false},                 // Combining Diacritical Marks for Symbols block
		{"1.\u05d0", false},                // Bidi domain: a label may not start with a digit
		{"\u05d0.", false},
		{"\u3002", false},
		{strings.Repeat("\u00e4", 60), false}, // A-label over 63 octets
		{strings.Repeat("\u00e4", 4*maxHostnameBytes), false},
		{"a\xffb", false}, // not UTF-8
	})
}

func TestFormatEmail(t *testing.T) {
	t.Parallel()
	checkFormat(t, "email", func(s string) bool { return isEmail(s, false) }, []formatCase{
		{"joe@example.com", true},
		{"a.b+c@example.com", true},
		{`"joe bloggs"@example.com`, true},
		{`"a\"b"@example.com`, true},
		{`"a@b"@example.com`, true},
		{"joe@[192.0.2.1]", true},
		{"joe@[IPv6:2001:db8::1]", true},
		{"joe@[IPv6:fe80::1%eth0]", false},
		{"joe@[300.0.0.1]", false},
		{"joe@[192.0.2.1", false},
		{strings.Repeat("a", 64) + "@example.com", true},
		{strings.Repeat("a", 65) + "@example.com", false},
		{"@example.com", false},
		{"joe@", false},
		{"joe", false},
		{"a..b@example.com", false},
		{".a@example.com", false},
		{"a.@example.com", false},
		{`"unterminated@example.com`, false},
		{`"a\`, false},
		{"j\u00f6e@example.com", false}, // non-ASCII only in idn-email
		{"joe@exa_mple.com", false},
		{"joe@example.com.", false},
	})
	checkFormat(t, "idn-email", func(s string) bool { return isEmail(s, true) }, []formatCase{
		{"j\u00f6e@example.com", true},
		{"joe@b\u00fccher.ch", true},
		{"joe@bu\u0308cher.ch", true}, // the domain is normalised first
		{`"j\u00f6 e"@example.com`, true},
		{"joe\uff20example.com", false}, // a fullwidth at sign is no separator
		{"joe@\u2764.com", false},
		{"joe@[IPv6:::1]", true},
	})
}

func TestFormatIPv4(t *testing.T) {
	t.Parallel()
	checkFormat(t, "ipv4", isIPv4, []formatCase{
		{"0.0.0.0", true},
		{"255.255.255.255", true},
		{"192.0.2.1", true},
		{"01.2.3.4", false},
		{"1.2.3.04", false},
		{"00.0.0.0", false},
		{"+1.2.3.4", false},
		{"1.2.3.4.", false},
		{"1.2.3", false},
		{"1.2.3.4.5", false},
		{"1.2.3.256", false},
		{"1.2.3.1000", false},
		{"1..2.3", false},
		{"", false},
	})
}

func TestFormatURI(t *testing.T) {
	t.Parallel()
	uri := func(s string) bool { return isURI(s, false, false) }
	checkFormat(t, "uri", uri, []formatCase{
		{"https://example.com", true},
		{"https://user:pw@example.com:8080/a/b?c=d&e#f", true},
		{"https://example.com:/", true}, // an empty port is allowed
		{"http://[::1]:80/", true},
		{"http://[v7.x:y]/", true}, // IPvFuture
		{"urn:isbn:0451450523", true},
		{"mailto:a@b", true},
		{"a+b-c.d:x", true},
		{"x:", true},
		{"x:/a//b", true},
		{"http://[::1]x/", false},
		{"http://[::1", false},
		{"http://[fe80::1%25eth0]/", false}, // RFC 6874 zones are not RFC 3986
		{"http://[v.x]/", false},
		{"http://[vg.x]/", false},
		{"http://a@b@c/", false},
		{"http://a/%", false},
		{"http://a/%g0", false},
		{"http://a/#a#b", false},
		{"1a:b", false},
		{":b", false},
		{"rel/path", false},
		{"http://ex\u00e4mple.com/", false},
	})
	checkFormat(t, "uri-reference", func(s string) bool { return isURI(s, false, true) }, []formatCase{
		{"", true},
		{"a/b:c", true},
		{"./a:b", true},
		{"//a", true},
		{"?", true},
		{"#", true},
		{"a:b:c", true}, // scheme "a"
		{"a b", false},
		{"%", false},
		{"[::1]", false},
	})
	checkFormat(t, "iri", func(s string) bool { return isURI(s, true, false) }, []formatCase{
		{"http://\u00e9x.example/\u00e9?\ue000#\u00e9", true}, // private use in the query
		{"http://ex.example/#\ue000", false},                  // but not in the fragment
		{"http://ex.example/\ue000", false},                   // nor in the path
		{"http://ex.example/\ufffe", false},                   // a noncharacter
		{"http://ex.example/\u00a0", true},
		{"http://ex.example/\u0085", false}, // C1 control
		{"\u00e9", false},
	})
	checkFormat(t, "iri-reference", func(s string) bool { return isURI(s, true, true) }, []formatCase{
		{"\u00e9/\u00e9", true},
		{"\u00e9 \u00e9", false},
	})
}

func TestFormatURITemplate(t *testing.T) {
	t.Parallel()
	checkFormat(t, "uri-template", isURITemplate, []formatCase{
		{"", true},
		{"http://example.com/{+path}/{x,y}{?q*}{&r:3}{#f}", true},
		{"{var:9999}", true},
		{"{a_b.c%2Ad}", true},
		{"{a}{b}", true},
		{"a'b!$&()*+,;=:@/?[]", true},
		{"\ue000", true}, // iprivate
		{"{", false},
		{"}", false},
		{"{a{b}", false},
		{"{a}}", false},
		{"{=a}", false}, // reserved operator
		{"{|a}", false},
		{"{+}", false},
		{"{a*:1}", false},
		{"{a:1*}", false},
		{"{.a.}", false},
		{"{a.}", false},
		{"{a:}", false},
		{"{a%4}", false},
		{"%4", false},
		{"a\\b", false},
		{"a^b", false},
		{"a<b", false},
		{"a\x7fb", false},
		{"\ufffe", false},
	})
}

// SPEC R6.6: our checkers are active only where format is an assertion;
// in 2019-09 and 2020-12 format stays an annotation.
func TestFormatOnlyWhereAsserted(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"hostname": "xn--qei.com", "idn-hostname": "\u2764.com", "email": "@x.com", "idn-email": "a\uff20b.com",
		"ipv4": "+1.2.3.4", "uri": "http://a/b c", "uri-reference": "a b", "iri": "http://a/\ue000",
		"iri-reference": "a b", "uri-template": "{=a}",
	}
	for _, f := range assertedFormats {
		value, ok := bad[f.Name]
		if !ok {
			t.Fatalf("no invalid value for format %q", f.Name)
		}
		args, _ := json.Marshal(map[string]string{"v": value})
		for _, d := range []struct {
			dialect  string
			asserted bool
		}{{dialect2020, false}, {dialect2019, false}, {dialect7, true}, {dialect6, true}, {dialect4, true}} {
			s := mustCompile(t, `{"$schema":"`+d.dialect+`","properties":{"v":{"type":"string","format":"`+f.Name+`"}}}`)
			err := s.Validate(args)
			if (err != nil) != d.asserted {
				t.Errorf("%s in %s: Validate = %v, want an error: %v", f.Name, d.dialect, err, d.asserted)
				continue
			}
			if err == nil {
				continue
			}
			// SPEC R6.7: the value never appears in the error.
			text, _ := json.Marshal(violationsOf(t, err))
			if strings.Contains(err.Error()+string(text), value) {
				t.Errorf("%s: error %v echoes the value", f.Name, err)
			}
		}
	}
}

// Non-strings are never a format violation.
func TestFormatIgnoresNonStrings(t *testing.T) {
	t.Parallel()
	for _, f := range assertedFormats {
		for _, v := range []any{nil, true, json.Number("1"), 1.5, []any{"-"}, map[string]any{"a": "-"}} {
			if err := f.Validate(v); err != nil {
				t.Errorf("%s(%T) = %v, want nil", f.Name, v, err)
			}
		}
	}
}

// Hostile inputs: long, repetitive, deeply bracketed. Each checker is one
// linear pass (no backtracking), so these just have to finish; a
// quadratic checker would make the test visibly slow, not fail it.
func TestFormatLongInputs(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	inputs := []string{
		strings.Repeat("a", n),
		strings.Repeat("{", n),
		strings.Repeat("{a", n/2) + "}",
		strings.Repeat("a.", n/2),
		strings.Repeat("xn--a.", n/6),
		strings.Repeat("\u00e4", n/2),
		strings.Repeat("%41", n/3),
		"http://" + strings.Repeat("[", n),
		strings.Repeat("\"", n) + "@a",
		strings.Repeat("@", n),
	}
	// Linear checkers take milliseconds on 1 MiB; a quadratic one takes
	// minutes. The bound is wide for a slow or loaded machine.
	const bound = 10 * time.Second
	for _, f := range assertedFormats {
		for i, in := range inputs {
			start := time.Now()
			_ = f.Validate(in)
			if d := time.Since(start); d > bound {
				t.Errorf("format %s on long input %d took %s", f.Name, i, d)
			}
		}
	}
}

// FuzzFormats: no checker panics, and the grammars nest as the RFCs say:
// a URI is a URI reference and an IRI, an IRI is an IRI reference, a URI
// reference is an IRI reference, and an ASCII idn-hostname is a hostname.
func FuzzFormats(f *testing.F) {
	for _, s := range []string{
		"", "example.com", "xn--9n2bp8q.xn--9t4b11yi5a", "b\u00fccher.ch", "l\u00b7l", "\u0915\u094d\u200d\u0937",
		"joe@example.com", `"a b"@[IPv6:::1]`, "1.2.3.4", "http://[v1.x]:80/a?b#c", "//a@b:1", "\u00e9?\ue000",
		"{+a,b:3}{?c*}", "(?<n>a)\\k<n>[\\d-]", "(?<=a+)b|\\u{1F600}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, fm := range assertedFormats {
			_ = fm.Validate(s)
		}
		_ = isECMARegex(s)
		uri, uriRef := isURI(s, false, false), isURI(s, false, true)
		iri, iriRef := isURI(s, true, false), isURI(s, true, true)
		if uri && (!uriRef || !iri) || iri && !iriRef || uriRef && !iriRef {
			t.Errorf("%q: uri=%v uri-reference=%v iri=%v iri-reference=%v", s, uri, uriRef, iri, iriRef)
		}
		if isASCII(s) && isHostname(s, true) && !isHostname(s, false) {
			t.Errorf("%q: an ASCII idn-hostname that is no hostname", s)
		}
	})
}
