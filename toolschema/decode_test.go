package toolschema

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// decodeInputs are tricky documents for the decoder; each must decode
// exactly as the library's own decoder (encoding/json with UseNumber) does.
var decodeInputs = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `-1E+2`, `12345678901234567890123`,
	`0.1000000000000000055511151231257827`, `1e400`, `"x"`, ` {"a" : [1, {"b": null}] } `,
	`{"a":1,"a":2}`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`,
	`"\ud83d\ud83d\ude00"`, `"\"\\\/\b\f\n\r\t"`, "\"\xff\xfe\"", "\"a\xc3\"", "\"\xe2\x82\"",
	"\"\xed\xa0\x80\"", `"é"`, "\"\xc0\xaf\"", "{\"\xff\":1}", `{"\ud800":1}`, `["\udc00"]`, "\"\xef\xbf\xbd\"",
	`"\ufffd"`, `"\uFFFD\ud800"`, "[\"\xef\xbf\xbd\",\"\xc0\"]", `"\ud83d\ude00\ud83d"`,
	// Invalid documents: both decoders must refuse them.
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`,
	`+1`, `NaN`, `tru`, `nul`, `"abc`, "\"a\x01b\"", `"\x"`, `"\u12g4"`, `"\u12"`, `[1 2]`,
	`{} {}`, `1 2`, `[`, `["a"`, `{"a":}`, `{"a":1 "b":2}`, "\xef\xbb\xbf{}", `'a'`,
}

func TestDecodeMatchesLibrary(t *testing.T) {
	t.Parallel()
	for _, in := range decodeInputs {
		checkDecodeMatches(t, []byte(in))
	}
}

// checkDecodeMatches decodes in as the library does, and with validText
// (arguments): the same, except that a document the library reads with
// U+FFFD in place of invalid UTF-8 or a lone surrogate escape is refused.
func checkDecodeMatches(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(in))
	d := decoder{data: in, maxDepth: 1 << 30, maxNumberLength: 1 << 30, maxExponent: 1 << 30}
	got, gotErr := d.document()
	if de, ok := gotErr.(*decodeError); ok && de.bigNumber {
		return // a bound of ours, on purpose stricter than encoding/json
	}
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("decode %q: error %v, library error %v", in, gotErr, wantErr)
	}
	if wantErr == nil {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decode %q differs from the library (-library +ours):\n%s", in, diff)
		}
	}

	strict := decoder{data: in, maxDepth: 1 << 30, maxNumberLength: 1 << 30, maxExponent: 1 << 30, validText: true}
	sgot, serr := strict.document()
	de, _ := serr.(*decodeError)
	// The library replaces what we refuse with U+FFFD; where the input
	// also holds U+FFFD itself, the replacement cannot be told apart.
	replaced := wantErr == nil && holdsReplacement(want)
	ambiguous := bytes.Contains(in, []byte("\xef\xbf\xbd")) || bytes.Contains(bytes.ToLower(in), []byte(`\ufffd`))
	switch {
	case wantErr != nil:
		if serr == nil {
			t.Fatalf("decode %q with validText: no error, library error %v", in, wantErr)
		}
	case serr == nil:
		if diff := cmp.Diff(want, sgot); diff != "" {
			t.Fatalf("decode %q with validText differs from the library (-library +ours):\n%s", in, diff)
		}
		if !utf8.Valid(in) || (replaced && !ambiguous) {
			t.Fatalf("decode %q with validText: accepted text the library replaced", in)
		}
	case de == nil || !de.badText:
		t.Fatalf("decode %q with validText: %v, library accepts it", in, serr)
	case utf8.Valid(in) && !replaced:
		t.Fatalf("decode %q with validText: %v, but the text is valid", in, serr)
	}
}

// holdsReplacement reports whether a string or property name of v holds
// U+FFFD.
func holdsReplacement(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, utf8.RuneError)
	case []any:
		for _, e := range v {
			if holdsReplacement(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, utf8.RuneError) || holdsReplacement(e) {
				return true
			}
		}
	}
	return false
}

func FuzzDecode(f *testing.F) {
	for _, in := range decodeInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecodeMatches(t, in)
	})
}

func TestDecodeDepthLimit(t *testing.T) {
	t.Parallel()
	deep := bytes.Repeat([]byte("["), 100000)
	_, err := decodeJSON(deep, 64)
	de, ok := err.(*decodeError)
	if !ok || !de.tooDeep {
		t.Fatalf("decode of 100000 brackets = %v, want a depth error", err)
	}
	if _, err := decodeJSON([]byte(`[[[[1]]]]`), 4); err != nil {
		t.Fatalf("depth 4 at limit 4: %v", err)
	}
	if _, err := decodeJSON([]byte(`[[[[[1]]]]]`), 4); err == nil {
		t.Fatal("depth 5 at limit 4: no error")
	}
}
