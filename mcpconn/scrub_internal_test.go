package mcpconn

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testSecret is a value a connection resolved: 40 bytes of letters,
// digits, '-' and '_', like an API token.
const testSecret = "sk-live_4f9Qz7Lm2Xp8Rt6Vw1Yb3Nc5Hd0Jg9Ke"

// b64At returns the standard base64 of secret placed at byte offset off
// of a longer binary text, as an image holding it would carry it.
func b64At(secret string, off int) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89", off) + secret + "\x00\x01\x02\x03"))
}

// Issue 23 item 4: every form of a resolved value is masked in the
// strings of a message, the rest of the bytes stay as they were.
func TestScrubJSON(t *testing.T) {
	t.Parallel()
	s := newScrubber([]string{testSecret, "short7!"})
	half := len(testSecret) / 2
	quoted, _ := json.Marshal(testSecret)
	var unicodeEscaped strings.Builder
	for _, r := range testSecret {
		unicodeEscaped.WriteString(`\u00` + hex.EncodeToString([]byte{byte(r)}))
	}
	m := `[redacted]`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"nothing to mask stays the same bytes", `{"a":"x","n":12345678901234567890,"f":1e-400}`, ``},
		{"as is", `{"text":"token ` + testSecret + ` end","n":12345678901234567890}`, `{"text":"token ` + m + ` end","n":12345678901234567890}`},
		{"upper case", `{"t":"` + strings.ToUpper(testSecret) + `"}`, `{"t":"` + m + `"}`},
		{"lower case", `{"t":"x` + strings.ToLower(testSecret) + `y"}`, `{"t":"x` + m + `y"}`},
		{"hex lower", `{"t":"` + hex.EncodeToString([]byte(testSecret)) + `"}`, `{"t":"` + m + `"}`},
		{"hex upper", `{"t":"` + strings.ToUpper(hex.EncodeToString([]byte(testSecret))) + `"}`, `{"t":"` + m + `"}`},
		{"base64", `{"t":"` + base64.StdEncoding.EncodeToString([]byte(testSecret)) + `"}`, `{"t":"` + m + `"}`},
		{"base64url unpadded", `{"t":"` + base64.RawURLEncoding.EncodeToString([]byte(testSecret)) + `"}`, `{"t":"` + m + `"}`},
		{"query escaped", `{"uri":"https://x.test/?t=` + url.QueryEscape(testSecret+"/+") + `"}`, `{"uri":"https://x.test/?t=` + m + `%2F%2B"}`},
		{"path escaped", `{"uri":"https://x.test/` + url.PathEscape("a/"+testSecret) + `/x"}`, `{"uri":"https://x.test/a%2F` + m + `/x"}`},
		{"json unicode escapes", `{"t":"<` + unicodeEscaped.String() + `>\n"}`, `{"t":"<` + m + `>\n"}`},
		{"json-escaped inside a text", `{"t":` + string(mustJSON(`{"k":`+string(quoted)+`}`)) + `}`, `{"t":"{\"k\":\"` + m + `\"}"}`},
		{"key", `{"` + testSecret + `":1}`, `{"` + m + `":1}`},
		{"split across two text blocks", `{"content":[{"type":"text","text":"A ` + testSecret[:half] + `"},{"type":"text","text":"` + testSecret[half:] + ` B"}]}`,
			`{"content":[{"type":"text","text":"A ` + m + `"},{"type":"text","text":"` + m + ` B"}]}`},
		{"split unevenly, the small part first", `["x ` + testSecret[:3] + `","` + testSecret[3:] + `"]`, `["x ` + m + `","` + m + `"]`},
		{"the larger part alone", `{"log":"` + testSecret[:30] + `"}`, `{"log":"` + m + `"}`},
		{"twice, touching", `{"t":"` + testSecret + testSecret + `"}`, `{"t":"` + m + `"}`},
		{"shorter than the minimum is left", `{"t":"short7!"}`, ``},
		{"unterminated string", `{"t":"` + testSecret, `{"t":"` + m},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := []byte(tc.in)
			got := s.json(in)
			want := tc.want
			if want == "" {
				want = tc.in
				if &got[0] != &in[0] {
					t.Errorf("a message without a value was copied")
				}
			}
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("scrubbed (-want +got):\n%s", diff)
			}
		})
	}
	// Base64 inside a longer text, at each alignment: the characters that
	// hold only the secret's bits are masked.
	for off := range 3 {
		enc := b64At(testSecret, off)
		got := string(s.json([]byte(`{"data":"` + enc + `"}`)))
		if !strings.Contains(got, m) || strings.Contains(got, base64Core([]byte(testSecret), off)) {
			t.Errorf("base64 at offset %d: %s", off, got)
		}
	}
}

func mustJSON(s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// Without a value long enough there is no scrubber at all.
func TestScrubberNeedsAValueOfMinimumLength(t *testing.T) {
	t.Parallel()
	if s := newScrubber([]string{"", "1234567", "abc"}); s != nil {
		t.Errorf("newScrubber of short values = %v, want nil", s)
	}
	var s *scrubber
	if got := s.json([]byte(`{"a":"1234567"}`)); string(got) != `{"a":"1234567"}` {
		t.Errorf("nil scrubber changed %s", got)
	}
}

// The text agt cut (the start of a stderr tail, the end of the stdout it
// kept) loses a piece of a value there, however small.
func TestScrubTextCut(t *testing.T) {
	t.Parallel()
	s := newScrubber([]string{testSecret})
	for _, tc := range []struct {
		name, in         string
		cutStart, cutEnd bool
		want             string
	}{
		{"whole", "line " + testSecret + "\n", false, false, "line [redacted]\n"},
		{"cut start", testSecret[34:] + " rest\n", true, false, "[redacted] rest\n"},
		{"cut start not cut", testSecret[34:] + " rest\n", false, false, testSecret[34:] + " rest\n"},
		{"cut end", "starting with " + testSecret[:5], false, true, "starting with [redacted]"},
	} {
		if got := s.text(tc.in, tc.cutStart, tc.cutEnd); got != tc.want {
			t.Errorf("%s: text = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The screen's readers hand on the same bytes however they arrive, with
// only the strings that held a value rewritten: stdout line by line,
// event streams event by event (data as a message, other lines as text,
// the tools/list page captured from the scrubbed bytes), other bodies
// whole.
func TestScreenScrubs(t *testing.T) {
	t.Parallel()
	s := newScrubber([]string{testSecret})
	m := `[redacted]`
	mask := strings.NewReplacer(strings.ToUpper(testSecret), m, hex.EncodeToString([]byte(testSecret)), m, testSecret, m, testSecret[:20], m).Replace
	page := `{"tools":[{"name":"a","description":"key ` + testSecret + `","inputSchema":{"type":"object"}}]}`
	stream := "id: 1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.ToUpper(testSecret) + "\"}}\r\n\r\n" +
		": a comment with " + testSecret + "\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":" + page + "}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":\"" + testSecret[:20] + "\"}}"
	lines := `{"jsonrpc":"2.0","method":"x","params":{"a":"` + testSecret + `"}}` + "\n\n" + `{"jsonrpc":"2.0","method":"y"}` + "\n" +
		`{"jsonrpc":"2.0","method":"z","params":{"c":"` + strings.Repeat("x", 100<<10) + hex.EncodeToString([]byte(testSecret)) + `"}}`
	body := `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"bad ` + testSecret + `"}}`
	for _, n := range []int{1, 2, 7, 64, 4096, 1 << 20} {
		c := newToolsListCapture(defaultMaxTools, defaultMaxListBytes)
		c.request("n7")
		screen := &messageScreen{ref: "r", capture: c, guard: testGuard(), scrub: s}
		got, err := io.ReadAll(&eventBody{ReadCloser: &chunkReader{data: []byte(stream), n: n}, screen: screen, capture: c, guard: testGuard()})
		if want := mask(stream); err != nil || framed(got) != framed([]byte(want)) {
			t.Errorf("event stream in chunks of %d: %v\n got %q\nwant %q", n, err, got, want)
		}
		if got, _ := c.take(); string(got) != mask(page) {
			t.Errorf("chunks of %d: captured %s", n, got)
		}
		got, err = io.ReadAll(&screenedLines{lineReader: lineReader{ReadCloser: &chunkReader{data: []byte(lines), n: n}}, screen: screen})
		if err != nil || framed(got) != framed([]byte(mask(lines))) {
			t.Errorf("stdout in chunks of %d: %v, %.300q", n, err, got)
		}
		got, err = io.ReadAll(&screenedJSONBody{ReadCloser: &chunkReader{data: []byte(body), n: n}, screen: screen, guard: testGuard(), scrubOnly: true})
		if err != nil || string(got) != mask(body) {
			t.Errorf("error body in chunks of %d: %v, %s", n, err, got)
		}
		// Without anything to mask, every byte as read.
		clean := &messageScreen{ref: "r", guard: testGuard(), scrub: newScrubber([]string{"another-value-entirely"})}
		got, _ = io.ReadAll(&eventBody{ReadCloser: &chunkReader{data: []byte(stream), n: n}, screen: clean, guard: testGuard()})
		if string(got) != stream {
			t.Errorf("chunks of %d: a stream without the value changed", n)
		}
	}
}

// framed is a stream with the line ends the screen writes for a message
// it rewrote: '\n' for "\r\n", and one at the end.
func framed(b []byte) string {
	return strings.TrimSuffix(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") + "\n"
}

// FuzzScrub: any bytes are scrubbed without a panic; valid JSON stays
// valid JSON, and no string in it holds the value as is afterwards.
func FuzzScrub(f *testing.F) {
	f.Add([]byte(`{"a":"` + testSecret + `","b":["x` + testSecret[:9] + `","` + testSecret[9:] + `"]}`))
	f.Add([]byte(`"\u0073k-live_4f9Qz7Lm2Xp8Rt6Vw1Yb3Nc5Hd0Jg9Ke\ud800"`))
	f.Add([]byte(`{"a":"\`))
	s := newScrubber([]string{testSecret})
	f.Fuzz(func(t *testing.T, in []byte) {
		out := s.json(bytes.Clone(in))
		if !json.Valid(in) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q became invalid JSON %q", in, out)
		}
		var v any
		_ = json.Unmarshal(out, &v)
		b, _ := json.Marshal(v)
		if strings.Contains(strings.ToLower(string(b)), strings.ToLower(testSecret)) {
			t.Fatalf("%q still holds the value: %q", in, out)
		}
	})
}

// BenchmarkScrubMessage: the scrubber alone, three values, on a 1 MiB
// result of prose with escapes holding one value four times ("result",
// rewritten), the same without any ("clean", handed on as it is), and a
// 1 MiB listing of many small strings ("listing").
func BenchmarkScrubMessage(b *testing.B) {
	s := newScrubber([]string{testSecret, "postgres-password-0xC0FFEE", "ghp_0123456789abcdefghijABCDEFGHIJ"})
	prose := strings.Repeat(`The quick brown fox jumps over the lazy dog; 0123456789 pack my box.\n`, (1<<20)/72/4)
	var listing strings.Builder
	listing.WriteString(`{"tools":[`)
	for i := 0; listing.Len() < 1<<20; i++ {
		if i > 0 {
			listing.WriteByte(',')
		}
		fmt.Fprintf(&listing, `{"name":"tool_%d","description":"does things","inputSchema":{"type":"object","properties":{"a":{"type":"string","description":"an a"},"b":{"type":"integer"}}}}`, i)
	}
	listing.WriteString(`]}`)
	for _, tc := range []struct{ name, msg string }{
		{"result", `{"content":[{"type":"text","text":"` + testSecret + prose + testSecret + prose + testSecret + prose + testSecret + prose + `"}]}`},
		{"clean", `{"content":[{"type":"text","text":"` + prose + prose + prose + prose + `"}]}`},
		{"listing", listing.String()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			msg := []byte(tc.msg)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				s.json(msg)
			}
		})
	}
}
