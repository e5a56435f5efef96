package mcpconn

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agtsdk/agt/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// minScrubbedBytes is the shortest value a session scrubs from what its
// server sends (see Secrets in what servers send, in the package doc): a
// shorter one (a PIN, "true", a port) would mask ordinary words and
// numbers, so it is left alone. Fixed.
const minScrubbedBytes = 8

// minFragment is the shortest piece of a value's form that is masked on
// its own at the end or start of a string, when it is at least half the
// form: the larger part of a value split in two, wherever the other part
// went.
const minFragment = minScrubbedBytes

// minCutFragment is the shortest piece of a value's form masked at an end
// where agt itself cut the text (the start of a stderr tail, the end of
// the stdout prefix kept): the value may go on past the cut.
const minCutFragment = 4

// scrubber masks the values agt resolved for one connection in every
// string a server sends on it, in the forms listed by scrubForms. It
// matches with an Aho-Corasick automaton over the forms (ASCII case and
// the two base64 alphabets folded together), so a message costs one pass
// over its strings, plus a pass over at most the longest form's bytes at
// the start of each string, whatever the number of values. It is
// immutable once built and safe for concurrent use.
//
// The values exist only inside the automata, as the forms' bytes; a
// scrubber is never logged or printed.
type scrubber struct {
	fwd automaton // the forms
	rev automaton // the forms reversed: which form ends a string starts with
	// comp lists, for each node of rev (a form's end), the nodes of fwd
	// (the rest of the form, its start) that complete it:
	// comp[compAt[r]:compAt[r+1]].
	comp   []int32
	compAt []int32
	// maxForm is the length of the longest form.
	maxForm int
	scratch sync.Pool // *scrubScratch
}

// automaton is an Aho-Corasick automaton over folded bytes: a dense row
// for the root, sparse edges elsewhere.
type automaton struct {
	root  [256]int32
	nodes []acNode
	edges []acEdge
}

type acNode struct {
	edges, nEdges int32
	fail          int32
	depth         int32
	// out is the length of the longest form that ends here (this node's
	// or one reached by fail), 0 for none.
	out int32
	// shortest is the length of the shortest form that goes through this
	// node: a piece this deep is a fragment when it is half of it.
	shortest int32
}

type acEdge struct {
	c  byte
	to int32
}

// foldTable folds what the matching ignores: ASCII case, and the
// characters in which the standard and URL base64 alphabets differ.
var foldTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c) + 'a' - 'A'
	}
	t['+'], t['/'] = '-', '_'
	return t
}()

func fold(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		b[i] = foldTable[c]
	}
	return b
}

// scrubForms returns the forms of v that are masked: as is and in upper
// and lower case; hex; URL-encoded (query and path escaping); escaped as
// a JSON string's contents; standard base64, padded and not, and the part
// that stays the same at each of the three alignments in a longer base64
// text. The URL base64 alphabet and letter case are folded in matching.
func scrubForms(v string) []string {
	b := []byte(v)
	forms := []string{v, strings.ToUpper(v), strings.ToLower(v), hex.EncodeToString(b),
		url.QueryEscape(v), url.PathEscape(v),
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b)}
	if j, err := json.Marshal(v); err == nil {
		forms = append(forms, string(j[1:len(j)-1]))
	}
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		j := bytes.TrimSpace(plain.Bytes())
		forms = append(forms, string(j[1:len(j)-1]))
	}
	for align := range 3 {
		forms = append(forms, base64Core(b, align))
	}
	return forms
}

// base64Core returns the base64 characters that encode only v's bytes
// when v starts at byte align (0-2) of a group of three inside a longer
// encoded text: the characters that also hold bits of a neighbour are
// left out.
func base64Core(v []byte, align int) string {
	buf := make([]byte, align+len(v))
	copy(buf[align:], v)
	enc := base64.RawStdEncoding.EncodeToString(buf)
	start := [3]int{0, 2, 3}[align]
	end := len(enc)
	if len(buf)%3 != 0 {
		end--
	}
	if start >= end {
		return ""
	}
	return enc[start:end]
}

// newScrubber returns the scrubber of values, or nil when no value is at
// least minScrubbedBytes long (nothing to scrub).
func newScrubber(values []string) *scrubber {
	var forms [][]byte
	seen := map[string]bool{}
	for _, v := range values {
		if len(v) < minScrubbedBytes {
			continue
		}
		for _, f := range scrubForms(v) {
			fb := fold(f)
			if len(fb) < minScrubbedBytes || seen[string(fb)] {
				continue
			}
			seen[string(fb)] = true
			forms = append(forms, fb)
		}
	}
	if len(forms) == 0 {
		return nil
	}
	slices.SortFunc(forms, bytes.Compare) // a deterministic automaton
	s := &scrubber{}
	fwdPaths := s.fwd.build(forms, false)
	revPaths := s.rev.build(forms, true)
	// comp: the form p ends with the reversed path of m bytes; its start
	// of len(p)-m bytes is the forward node that completes it.
	counts := make([]int32, len(s.rev.nodes)+1)
	for i, p := range forms {
		s.maxForm = max(s.maxForm, len(p))
		for m := 1; m < len(p); m++ {
			counts[revPaths[i][m]]++
		}
	}
	s.compAt = make([]int32, len(s.rev.nodes)+1)
	for r := range s.rev.nodes {
		s.compAt[r+1] = s.compAt[r] + counts[r]
	}
	s.comp = make([]int32, s.compAt[len(s.rev.nodes)])
	next := slices.Clone(s.compAt[:len(s.rev.nodes)])
	for i, p := range forms {
		for m := 1; m < len(p); m++ {
			r := revPaths[i][m]
			s.comp[next[r]] = fwdPaths[i][len(p)-m]
			next[r]++
		}
	}
	s.scratch.New = func() any { return &scrubScratch{} }
	return s
}

// build makes the automaton of forms (reversed when reverse is set) and
// returns, for each form, the node of each of its prefixes (index = the
// prefix's length).
func (a *automaton) build(forms [][]byte, reverse bool) [][]int32 {
	// A trie with child and sibling links first; edges are flattened after.
	type tnode struct {
		child, sibling int32
		c              byte
		depth, end     int32
		shortest       int32
	}
	trie := []tnode{{}}
	paths := make([][]int32, len(forms))
	for i, f := range forms {
		path := make([]int32, len(f)+1)
		n := int32(0)
		for j := range f {
			c := f[j]
			if reverse {
				c = f[len(f)-1-j]
			}
			ch := trie[n].child
			for ch != 0 && trie[ch].c != c {
				ch = trie[ch].sibling
			}
			if ch == 0 {
				trie = append(trie, tnode{c: c, depth: trie[n].depth + 1, sibling: trie[n].child, shortest: int32(len(f))})
				ch = int32(len(trie) - 1)
				trie[n].child = ch
			}
			trie[ch].shortest = min(trie[ch].shortest, int32(len(f)))
			n = ch
			path[j+1] = n
		}
		trie[n].end = int32(len(f))
		paths[i] = path
	}
	a.nodes = make([]acNode, len(trie))
	a.edges = make([]acEdge, 0, len(trie)-1)
	for i, t := range trie {
		a.nodes[i] = acNode{edges: int32(len(a.edges)), depth: t.depth, out: t.end, shortest: t.shortest}
		for ch := t.child; ch != 0; ch = trie[ch].sibling {
			a.edges = append(a.edges, acEdge{c: trie[ch].c, to: ch})
		}
		a.nodes[i].nEdges = int32(len(a.edges)) - a.nodes[i].edges
		if i == 0 {
			for _, e := range a.edges {
				a.root[e.c] = e.to
			}
		}
	}
	// Failure links, breadth first.
	queue := make([]int32, 0, len(trie))
	for _, e := range a.edgesOf(0) {
		queue = append(queue, e.to)
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range a.edgesOf(u) {
			v := e.to
			if u != 0 {
				a.nodes[v].fail = a.step(a.nodes[u].fail, e.c)
			}
			a.nodes[v].out = max(a.nodes[v].out, a.nodes[a.nodes[v].fail].out)
			queue = append(queue, v)
		}
	}
	return paths
}

func (a *automaton) edgesOf(n int32) []acEdge {
	nd := &a.nodes[n]
	return a.edges[nd.edges : nd.edges+nd.nEdges]
}

// step is the transition from st on the folded byte c.
func (a *automaton) step(st int32, c byte) int32 {
	for st != 0 {
		nd := &a.nodes[st]
		for _, e := range a.edges[nd.edges : nd.edges+nd.nEdges] {
			if e.c == c {
				return e.to
			}
		}
		st = nd.fail
	}
	return a.root[c]
}

// span is a range of a string's decoded bytes to mask.
type span struct{ from, to int32 }

// find runs the automaton from state st over text, whose first byte is
// decoded byte base of its string, and appends the spans of the forms
// that end in it to spans (touching spans merged). It returns them with
// the state at its end.
func (a *automaton) find(text []byte, st, base int32, spans []span) ([]span, int32) {
	for i := 0; i < len(text); i++ {
		c := foldTable[text[i]]
		if st == 0 {
			if st = a.root[c]; st == 0 {
				continue
			}
		} else {
			st = a.step(st, c)
		}
		if o := a.nodes[st].out; o > 0 {
			end := base + int32(i+1)
			spans = addSpan(spans, span{end - o, end})
		}
	}
	return spans, st
}

// findWritten is find over a JSON string's contents as written: runs of
// plain bytes as they are, each escape decoded. It also returns the
// length of the decoded contents.
func (a *automaton) findWritten(written []byte, spans []span) ([]span, int32, int32) {
	var scratch [utf8.UTFMax]byte
	st, d := int32(0), int32(0)
	for i := 0; i < len(written); {
		k := bytes.IndexByte(written[i:], '\\')
		if k < 0 {
			k = len(written) - i
		}
		spans, st = a.find(written[i:i+k], st, d, spans)
		d, i = d+int32(k), i+k
		if i < len(written) {
			var dec []byte
			dec, i = unescapeStep(scratch[:0], written, i)
			spans, st = a.find(dec, st, d, spans)
			d += int32(len(dec))
		}
	}
	return spans, st, d
}

func addSpan(spans []span, s span) []span {
	if n := len(spans); n > 0 && s.from <= spans[n-1].to {
		spans[n-1].from = min(spans[n-1].from, s.from)
		spans[n-1].to = max(spans[n-1].to, s.to)
		return spans
	}
	return append(spans, s)
}

// scrubSeg is one part of a message: JSON (whose string tokens are
// scrubbed) or plain text (scrubbed whole). cutStart and cutEnd say that
// agt cut the text there, so a value may go on past it.
type scrubSeg struct {
	b                []byte
	text             bool
	cutStart, cutEnd bool
}

// scrubToken is one string of a message: in segment seg, bytes
// [start, end) are its contents as written, with JSON escapes when escaped
// (plain text and JSON strings without a backslash are their own decoded
// contents). n is the length of its decoded contents.
type scrubToken struct {
	seg, start, end, n int32
	escaped            bool
}

// scrubEdit masks bytes [from, to) of the decoded contents of token tok.
type scrubEdit struct {
	tok      int32
	from, to int32
}

// scrubScratch is the working state of one message.
type scrubScratch struct {
	tokens []scrubToken
	edits  []scrubEdit
	spans  []span
	dec    []byte // the decoded start of a string with escapes
	// last[f] is the latest token whose end is the start of a form
	// (fwd node f), valid when stamp[f] == gen.
	last  []int32
	stamp []uint32
	gen   uint32
}

// scrub masks the values in segs, one message, rewriting in place each
// segment that held one, and reports whether any did. A nil scrubber
// scrubs nothing.
func (s *scrubber) scrub(segs []scrubSeg) bool {
	if s == nil {
		return false
	}
	sc := s.scratch.Get().(*scrubScratch)
	defer s.scratch.Put(sc)
	sc.tokens, sc.edits = sc.tokens[:0], sc.edits[:0]
	if len(sc.last) != len(s.fwd.nodes) {
		sc.last, sc.stamp, sc.gen = make([]int32, len(s.fwd.nodes)), make([]uint32, len(s.fwd.nodes)), 0
	}
	if sc.gen++; sc.gen == 0 { // wrapped: forget every stamp
		clear(sc.stamp)
		sc.gen = 1
	}
	for i := range segs {
		seg := &segs[i]
		if seg.text {
			s.token(sc, scrubToken{seg: int32(i), start: 0, end: int32(len(seg.b))}, seg.b, false, seg.cutStart, seg.cutEnd)
			continue
		}
		b := seg.b
		for at := 0; at < len(b); {
			q := bytes.IndexByte(b[at:], '"')
			if q < 0 {
				break
			}
			start := at + q
			end := skipString(b, start)
			tok := scrubToken{seg: int32(i), start: int32(start + 1), end: int32(end - 1)}
			if end < 0 { // unterminated: the rest, as it is
				end = len(b)
				tok.end = int32(end)
			}
			tok.escaped = bytes.IndexByte(b[tok.start:tok.end], '\\') >= 0
			// An object's key is scrubbed but never taken for half of a
			// split value: masking a piece of "text" would break its block.
			k := skipSpace(b, end)
			key := k < len(b) && b[k] == ':'
			s.token(sc, tok, b[tok.start:tok.end], key, false, false)
			at = end
		}
	}
	if len(sc.edits) == 0 {
		return false
	}
	s.rewrite(sc, segs)
	return true
}

// token finds what to mask in one string, written its contents as
// written (JSON escapes in it when tok.escaped): the forms in its decoded
// contents; unless it is an object's key, the start of a form at its end
// and the rest of that form at the start of a later string of the
// message (a value split in two), and a large piece of a form at either
// end on its own.
func (s *scrubber) token(sc *scrubScratch, tok scrubToken, written []byte, key, cutStart, cutEnd bool) {
	idx := int32(-1)
	id := func() int32 {
		if idx < 0 {
			sc.tokens = append(sc.tokens, tok)
			idx = int32(len(sc.tokens) - 1)
		}
		return idx
	}
	var end int32
	content := written
	if tok.escaped {
		sc.spans, end, tok.n = s.fwd.findWritten(written, sc.spans[:0])
		// The start, decoded, for the reversed automaton below.
		sc.dec = unescapeJSON(sc.dec[:0], written[:min(len(written), 6*s.maxForm)])
		content = sc.dec
	} else {
		sc.spans, end = s.fwd.find(written, 0, 0, sc.spans[:0])
		tok.n = int32(len(written))
	}
	for _, sp := range sc.spans {
		sc.edits = append(sc.edits, scrubEdit{tok: id(), from: sp.from, to: sp.to})
	}
	n := tok.n
	if n == 0 || key {
		return
	}
	// The start: the reversed automaton over the first bytes, backwards,
	// ends in the forms' ends that the string starts with.
	r := int32(0)
	for i := min(len(content), s.maxForm-1) - 1; i >= 0; i-- {
		if c := foldTable[content[i]]; r == 0 {
			r = s.rev.root[c]
		} else {
			r = s.rev.step(r, c)
		}
	}
	for ; r != 0; r = s.rev.nodes[r].fail {
		d := s.rev.nodes[r].depth
		if cutStart && d >= minCutFragment || d >= minFragment && 2*d >= s.rev.nodes[r].shortest {
			sc.edits = append(sc.edits, scrubEdit{tok: id(), from: 0, to: d})
		}
		for _, f := range s.comp[s.compAt[r]:s.compAt[r+1]] {
			if sc.stamp[f] != sc.gen {
				continue
			}
			t := sc.last[f]
			sc.edits = append(sc.edits, scrubEdit{tok: id(), from: 0, to: d},
				scrubEdit{tok: t, from: sc.tokens[t].n - s.fwd.nodes[f].depth, to: sc.tokens[t].n})
		}
	}
	// The end: the forms' starts it ends with, for later strings.
	for f := end; f != 0; f = s.fwd.nodes[f].fail {
		d := s.fwd.nodes[f].depth
		if cutEnd && d >= minCutFragment || d >= minFragment && 2*d >= s.fwd.nodes[f].shortest {
			sc.edits = append(sc.edits, scrubEdit{tok: id(), from: n - d, to: n})
		}
		sc.last[f], sc.stamp[f] = id(), sc.gen
	}
}

// rewrite applies the edits: in each string with one, the bytes written
// for the masked decoded bytes become resource.Mask (touching spans one
// mask); every other byte, escapes included, stays as it was.
func (s *scrubber) rewrite(sc *scrubScratch, segs []scrubSeg) {
	slices.SortFunc(sc.edits, func(a, b scrubEdit) int {
		if a.tok != b.tok {
			return int(a.tok - b.tok)
		}
		return int(a.from - b.from)
	})
	var out []byte
	seg, copied := int32(-1), int32(0)
	flush := func() {
		if seg >= 0 {
			out = append(out, segs[seg].b[copied:]...)
			segs[seg].b = out
		}
	}
	for i := 0; i < len(sc.edits); {
		t := sc.tokens[sc.edits[i].tok]
		sc.spans = sc.spans[:0]
		for ; i < len(sc.edits) && sc.tokens[sc.edits[i].tok] == t; i++ {
			sc.spans = addSpan(sc.spans, span{sc.edits[i].from, sc.edits[i].to})
		}
		if t.seg != seg {
			flush()
			seg, copied = t.seg, 0
			out = make([]byte, 0, len(segs[seg].b)+64)
		}
		b := segs[seg].b
		out = append(out, b[copied:t.start]...)
		out = maskWritten(out, b[t.start:t.end], sc.spans, t.escaped)
		copied = t.end
	}
	flush()
}

// maskWritten appends written, a string's contents as written (with JSON
// escapes when escaped), to out with the bytes that encode the decoded
// spans replaced by resource.Mask. An escape that encodes bytes both in
// and out of a span is masked whole.
func maskWritten(out, written []byte, spans []span, escaped bool) []byte {
	var scratch [utf8.UTFMax]byte
	// next returns the end of the character at i and how many decoded
	// bytes it stands for, or, for a run of plain bytes, the end of the run
	// (at most max decoded bytes).
	next := func(i int, max int32) (int, int32) {
		if escaped && written[i] == '\\' {
			d, j := unescapeStep(scratch[:0], written, i)
			return j, int32(len(d))
		}
		j := len(written)
		if escaped {
			if k := bytes.IndexByte(written[i:], '\\'); k >= 0 {
				j = i + k
			}
		}
		j = min(j, i+int(max))
		return j, int32(j - i)
	}
	i, d := 0, int32(0)
	for _, sp := range spans {
		for d < sp.from && i < len(written) {
			j, n := next(i, sp.from-d)
			if d+n > sp.from {
				break // an escape that is partly in the span
			}
			out = append(out, written[i:j]...)
			i, d = j, d+n
		}
		out = append(out, resource.Mask...)
		for d < sp.to && i < len(written) {
			j, n := next(i, sp.to-d)
			i, d = j, d+n
		}
	}
	return append(out, written[i:]...)
}

// unescapeJSON appends the decoded contents of a JSON string, written its
// contents as written (between the quotes), to dst: escapes decoded, a
// lone surrogate as U+FFFD, any other byte as it is.
func unescapeJSON(dst, written []byte) []byte {
	for i := 0; i < len(written); {
		k := bytes.IndexByte(written[i:], '\\')
		if k < 0 {
			return append(dst, written[i:]...)
		}
		dst = append(dst, written[i:i+k]...)
		dst, i = unescapeStep(dst, written, i+k)
	}
	return dst
}

// unescapeStep decodes the escape at written[i] == '\\', appending its
// bytes to dst, and returns the index after it. A malformed escape stands
// for itself.
func unescapeStep(dst, written []byte, i int) ([]byte, int) {
	if i+1 >= len(written) {
		return append(dst, written[i:]...), len(written)
	}
	switch c := written[i+1]; c {
	case '"', '\\', '/':
		return append(dst, c), i + 2
	case 'b':
		return append(dst, '\b'), i + 2
	case 'f':
		return append(dst, '\f'), i + 2
	case 'n':
		return append(dst, '\n'), i + 2
	case 'r':
		return append(dst, '\r'), i + 2
	case 't':
		return append(dst, '\t'), i + 2
	case 'u':
		r, ok := hex4(written, i+2)
		if !ok {
			return append(dst, written[i:i+2]...), i + 2
		}
		end := i + 6
		if utf16.IsSurrogate(r) {
			lo, ok := rune(0), false
			if r < 0xDC00 && end+6 <= len(written) && written[end] == '\\' && written[end+1] == 'u' {
				lo, ok = hex4(written, end+2)
			}
			if ok && lo >= 0xDC00 && lo <= 0xDFFF {
				r, end = utf16.DecodeRune(r, lo), end+6
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(dst, r), end
	default:
		return append(dst, written[i:i+2]...), i + 2
	}
}

// json scrubs one JSON text, returning b itself when it held no value.
func (s *scrubber) json(b []byte) []byte {
	out, _ := s.jsonChanged(b)
	return out
}

// jsonChanged is json, and reports whether b held a value.
func (s *scrubber) jsonChanged(b []byte) ([]byte, bool) {
	segs := [1]scrubSeg{{b: b}}
	changed := s.scrub(segs[:])
	return segs[0].b, changed
}

// text scrubs a plain text the server wrote (a stderr tail, the stdout
// before the handshake); cutStart and cutEnd say that agt cut it there.
func (s *scrubber) text(t string, cutStart, cutEnd bool) string {
	segs := [1]scrubSeg{{b: []byte(t), text: true, cutStart: cutStart, cutEnd: cutEnd}}
	if !s.scrub(segs[:]) {
		return t
	}
	return string(segs[0].b)
}

// message scrubs a decoded message in place (the transports that hand
// messages, not bytes: Dial): a response's result, or its error's message
// and data; a request's or notification's params.
func (s *scrubber) message(msg jsonrpc.Message) {
	if s == nil {
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if we, ok := m.Error.(*jsonrpc.Error); ok && we != nil {
			segs := []scrubSeg{{b: []byte(we.Message), text: true}, {b: we.Data}}
			if s.scrub(segs) {
				we.Message = string(segs[0].b)
				we.Data = segs[1].b
			}
		}
		m.Result = s.json(m.Result)
	case *jsonrpc.Request:
		m.Params = s.json(m.Params)
	}
}
