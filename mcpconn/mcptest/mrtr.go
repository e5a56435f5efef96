//lint:file-ignore SA1019 sampling and roots are deprecated from protocol 2026-07-28 on, where a server still asks for them inside an input_required result

package mcptest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Multi round-trip requests (SEP-2322): a client of protocol 2026-07-28
// gets no server requests; a tool that needs input answers the call with
// input_required, what it asks (inputRequests) and a requestState, and
// reads the answers from the call sent again (inputResponses). The tools
// of FaultClientFeatures that ask the client (ask, sample, list_roots,
// rounds) ask so in a modern session, and by sending requests in a
// legacy one, so that one test runs in every era.

// ToolRounds is the tool of FaultClientFeatures that asks for input in
// several rounds (RoundsIn).
const ToolRounds = "rounds"

// The kinds of input a round of ToolRounds asks for (RoundsIn.Asks), and
// the keys of their input requests.
const (
	AskElicit = "elicit"
	AskSample = "sample"
	AskRoots  = "roots"
)

// StateMarker starts every requestState of ToolRounds: characters an
// encoder may write in another form (HTML escapes, a line separator,
// quotes, a backslash, a non-ASCII letter), so that a client that does
// not send the state back exactly as it came fails the server's check.
const StateMarker = "<&>\u2028\"\\é"

// RoundsIn is the input of rounds. Over a modern session each round is
// one input_required answer, and the call sent again carries its
// answers; over a legacy one the tool sends each round's requests
// itself, one after the other (elicitation/create, sampling/createMessage,
// roots/list), as a server of 2025-11-25 does.
type RoundsIn struct {
	// Asks lists the rounds, each the kinds it asks for joined by "+"
	// ("elicit", "sample+roots"). Empty: one round, "elicit".
	Asks []string `json:"asks,omitempty"`
	// Forever asks the last round again, for ever (a legacy session: at
	// most 1000 times).
	Forever bool `json:"forever,omitempty"`
	// Label is put in every message of the call and in its state: the
	// server refuses a state of a call with another label (a client that
	// mixes up parallel calls).
	Label string `json:"label,omitempty"`
	// StateBytes pads each requestState to at least this many bytes
	// (modern sessions).
	StateBytes int `json:"state_bytes,omitempty"`
	// Busy answers the first call, in a modern session, with
	// input_required asking nothing (load shedding: the state alone).
	Busy bool `json:"busy,omitempty"`
}

// RoundsOut is what rounds returns, as the JSON of its text: the
// answers of each round, in order.
type RoundsOut struct {
	Label   string        `json:"label,omitempty"`
	Rounds  int           `json:"rounds"`
	Answers []RoundAnswer `json:"answers"`
}

// RoundAnswer is the client's answer to one input of a round (for an
// elicitation, the ElicitResult; for sampling, the model's text; for
// roots, the URIs).
type RoundAnswer struct {
	Round  int             `json:"round"`
	Kind   string          `json:"kind"`
	Answer json.RawMessage `json:"answer"`
}

// roundsState is the requestState of rounds, before its signature.
type roundsState struct {
	Label   string        `json:"label"`
	Round   int           `json:"round"` // the rounds answered so far
	Answers []RoundAnswer `json:"answers"`
	Pad     string        `json:"pad,omitempty"`
}

// stateKey signs the states of this process: a state the client changed
// fails the check.
var stateKey = func() []byte {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return b[:]
}()

func signState(st roundsState, size int) string {
	body, _ := json.Marshal(st)
	if pad := size - len(body) - 80; pad > 0 {
		st.Pad = strings.Repeat("p", pad)
		body, _ = json.Marshal(st)
	}
	mac := hmac.New(sha256.New, stateKey)
	mac.Write(body)
	return StateMarker + hex.EncodeToString(mac.Sum(nil)) + string(body)
}

func openState(s string) (roundsState, error) {
	var st roundsState
	rest, ok := strings.CutPrefix(s, StateMarker)
	if !ok || len(rest) < 64 {
		return st, errors.New("the requestState was not sent back as it came")
	}
	sum, body := rest[:64], rest[64:]
	mac := hmac.New(sha256.New, stateKey)
	mac.Write([]byte(body))
	if !hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(sum)) || json.Unmarshal([]byte(body), &st) != nil {
		return st, errors.New("the requestState was not sent back as it came")
	}
	return st, nil
}

// modernClient reports whether the session's client speaks protocol
// 2026-07-28 (no server requests: multi round-trip instead), by the
// go-sdk's own rule.
func modernClient(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p == nil || isModern(p.ProtocolVersion)
}

// roundAsks returns the kinds round r (from 0) of in asks for; ok is
// false past the last round.
func roundAsks(in RoundsIn, r int) (kinds []string, ok bool) {
	asks := in.Asks
	if len(asks) == 0 {
		asks = []string{AskElicit}
	}
	if r >= len(asks) {
		if !in.Forever {
			return nil, false
		}
		r = len(asks) - 1
	}
	return strings.Split(asks[r], "+"), true
}

// inputRequest is what a round of rounds asks for one kind.
func inputRequest(kind, label string, r int) (mcp.InputRequest, error) {
	msg := fmt.Sprintf("[%s] round %d", label, r+1)
	switch kind {
	case AskElicit:
		return &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}}}}, nil
	case AskSample:
		return &mcp.CreateMessageParams{MaxTokens: 100, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: msg}}}}, nil
	case AskRoots:
		return &mcp.ListRootsParams{}, nil
	}
	return nil, fmt.Errorf("unknown kind %q (elicit, sample or roots)", kind)
}

// answerOf is the RoundAnswer of a client's answer.
func answerOf(kind string, r int, res any) RoundAnswer {
	var v any = res
	switch res := res.(type) {
	case *mcp.CreateMessageResult:
		v = textOf(res.Content)
	case *mcp.CreateMessageWithToolsResult:
		var texts []string
		for _, c := range res.Content {
			texts = append(texts, textOf(c))
		}
		v = strings.Join(texts, "")
	case *mcp.ListRootsResult:
		uris := []string{}
		for _, root := range res.Roots {
			uris = append(uris, root.URI)
		}
		v = uris
	}
	b, _ := json.Marshal(v)
	return RoundAnswer{Round: r + 1, Kind: kind, Answer: b}
}

func textOf(c mcp.Content) string {
	if tc, ok := c.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func (cf *clientFeatures) rounds(ctx context.Context, req *mcp.CallToolRequest, in RoundsIn) (*mcp.CallToolResult, any, error) {
	if !modernClient(req.Session) {
		return cf.roundsLegacy(ctx, req, in)
	}
	st := roundsState{Label: in.Label}
	if req.Params.RequestState != "" {
		var err error
		if st, err = openState(req.Params.RequestState); err != nil {
			return nil, nil, err
		}
		if st.Label != in.Label {
			return nil, nil, errors.New("the requestState belongs to another call")
		}
	} else if len(req.Params.InputResponses) > 0 {
		return nil, nil, errors.New("inputResponses without a requestState")
	}
	if in.Busy && req.Params.RequestState == "" {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: signState(st, in.StateBytes)}, nil, nil
	}
	// The answers of the round asked last, when the call carries them
	// all; else the same round again (a client that left one out).
	if st.Round > 0 || len(req.Params.InputResponses) > 0 {
		kinds, _ := roundAsks(in, st.Round)
		var got []RoundAnswer
		for _, k := range kinds {
			res, ok := req.Params.InputResponses[k]
			if !ok {
				got = nil
				break
			}
			got = append(got, answerOf(k, st.Round, res))
		}
		if got != nil {
			st.Answers = append(st.Answers, got...)
			st.Round++
		}
	}
	kinds, more := roundAsks(in, st.Round)
	if !more {
		b, _ := json.Marshal(RoundsOut{Label: in.Label, Rounds: st.Round, Answers: st.Answers})
		return textResult("%s", b), nil, nil
	}
	asks := mcp.InputRequestMap{}
	for _, k := range kinds {
		ir, err := inputRequest(k, in.Label, st.Round)
		if err != nil {
			return nil, nil, err
		}
		asks[k] = ir
	}
	return &mcp.CallToolResult{InputRequests: asks, RequestState: signState(st, in.StateBytes)}, nil, nil
}

// roundsLegacy is rounds for a client of 2025-11-25: the tool sends each
// round's requests itself.
func (cf *clientFeatures) roundsLegacy(ctx context.Context, req *mcp.CallToolRequest, in RoundsIn) (*mcp.CallToolResult, any, error) {
	out := RoundsOut{Label: in.Label, Answers: []RoundAnswer{}}
	for r := 0; r < 1000; r++ {
		kinds, ok := roundAsks(in, r)
		if !ok {
			break
		}
		for _, k := range kinds {
			ir, err := inputRequest(k, in.Label, r)
			if err != nil {
				return nil, nil, err
			}
			var res any
			switch p := ir.(type) {
			case *mcp.ElicitParams:
				res, err = req.Session.Elicit(ctx, p)
			case *mcp.CreateMessageParams:
				res, err = req.Session.CreateMessage(ctx, p)
			case *mcp.ListRootsParams:
				res, err = req.Session.ListRoots(ctx, p)
			}
			if err != nil {
				return failure(k, err), nil, nil
			}
			out.Answers = append(out.Answers, answerOf(k, r, res))
		}
		out.Rounds = r + 1
	}
	b, _ := json.Marshal(out)
	return textResult("%s", b), nil, nil
}

// askModern is the input_required side of a tool that asks for one
// input (ask, list_roots): in a modern session, the call without an
// answer gets input_required asking ir under key; the call sent again
// gets answered(the client's answer). ok is false in a legacy session.
func askModern(req *mcp.CallToolRequest, key string, ir mcp.InputRequest, answered func(mcp.InputResponse) *mcp.CallToolResult) (res *mcp.CallToolResult, ok bool) {
	if !modernClient(req.Session) {
		return nil, false
	}
	if r, got := req.Params.InputResponses[key]; got {
		return answered(r), true
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{key: ir}}, true
}

// sampleModern is sample in a modern session: one round per request,
// the texts so far in the requestState.
func sampleModern(req *mcp.CallToolRequest, params *mcp.CreateMessageParams, times int) *mcp.CallToolResult {
	var texts []string
	if s := req.Params.RequestState; s != "" {
		_ = json.Unmarshal([]byte(s), &texts)
	}
	if r, ok := req.Params.InputResponses["sample"]; ok {
		if res, ok := r.(*mcp.CreateMessageWithToolsResult); ok {
			var t []string
			for _, c := range res.Content {
				t = append(t, textOf(c))
			}
			texts = append(texts, strings.Join(t, ""))
		}
	}
	if len(texts) >= times {
		return textResult("model said: %s", strings.Join(texts, " | "))
	}
	state, _ := json.Marshal(append([]string{}, texts...))
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"sample": params}, RequestState: string(state)}
}

func (cf *clientFeatures) addRounds(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: ToolRounds, Description: "Asks for input in rounds (elicit, sample, roots), then returns every answer as JSON.",
		InputSchema: schemaFor[RoundsIn](func(s *jsonschema.Schema) {
			s.Properties["asks"].Items.Pattern = `^(elicit|sample|roots)(\+(elicit|sample|roots))*$`
			s.Properties["asks"].MaxItems = jsonschema.Ptr(100)
			s.Properties["state_bytes"].Maximum = jsonschema.Ptr(float64(8 << 20))
		})}, cf.rounds)
}
