package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// main only calls run; run takes stdin too, because an MCP server speaks on
// stdin and stdout (the tests run it as a child process on its real
// stdio, and call run with a reader and a writer for its own errors).
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "server-contract:", err)
		os.Exit(1)
	}
}

// run serves MCP on stdin and stdout until stdin closes or ctx ends. It
// never writes anything else on stdout: a banner would break the handshake.
func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments; it speaks MCP on stdin and stdout")
	}
	server := newServer()
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	err := server.Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Limits of the schema. Each is enforced by the schema (so agt refuses a
// call before it reaches the server) and, because the go-sdk validates
// against the same schema before decoding, by this server too.
const (
	QuantityMin     = 1
	QuantityMax     = 10
	NoteMaxLen      = 200
	skuPattern      = `^[A-Z]{3}-[0-9]{4}$`
	customerPattern = `^[a-z][a-z0-9_]{2,31}$`
)

// ReserveIn is the one definition of the reserve tool's arguments: the
// schema is inferred from it and the server decodes the call into it.
type ReserveIn struct {
	SKU      string `json:"sku" jsonschema:"the article, like ABC-0001"`
	Quantity int    `json:"quantity" jsonschema:"how many, 1 to 10"`
	Customer string `json:"customer" jsonschema:"who reserves; only they may cancel"`
	Note     string `json:"note,omitempty" jsonschema:"free text, at most 200 characters"`
}

// ReserveOut is the result of reserve.
type ReserveOut struct {
	ReservationID string `json:"reservation_id"`
	Remaining     int    `json:"remaining"`
}

// CancelIn is the input of cancel.
type CancelIn struct {
	ReservationID string `json:"reservation_id"`
	Caller        string `json:"caller" jsonschema:"who asks; must be the customer who reserved"`
}

// CancelOut is the result of cancel.
type CancelOut struct {
	Remaining int `json:"remaining"`
}

// StockIn is the input of stock.
type StockIn struct {
	SKU string `json:"sku,omitempty" jsonschema:"one article; all articles when omitted"`
}

// StockOut is the result of stock.
type StockOut struct {
	Stock map[string]int `json:"stock"`
}

// schemaFor infers In's schema and lets refine add bounds to it.
func schemaFor[In any](refine func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(In), err))
	}
	refine(s.Properties)
	return s
}

func newServer() *mcp.Server {
	st := &store{
		stock:        map[string]int{"ABC-0001": 12, "XYZ-0042": 3},
		reservations: map[string]reservation{},
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "stock", Version: "1.0.0"}, nil)
	s.AddReceivingMiddleware(redactArgumentErrors)
	mcp.AddTool(s, &mcp.Tool{Name: "reserve", Description: "Reserves articles for a customer.",
		InputSchema: schemaFor[ReserveIn](func(p map[string]*jsonschema.Schema) {
			p["sku"].Pattern = skuPattern
			p["quantity"].Minimum = jsonschema.Ptr(float64(QuantityMin))
			p["quantity"].Maximum = jsonschema.Ptr(float64(QuantityMax))
			p["customer"].Pattern = customerPattern
			p["note"].MaxLength = jsonschema.Ptr(NoteMaxLen)
		})}, st.reserve)
	mcp.AddTool(s, &mcp.Tool{Name: "cancel", Description: "Cancels a reservation; only its customer may.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(true)},
		InputSchema: schemaFor[CancelIn](func(p map[string]*jsonschema.Schema) {
			p["reservation_id"].Pattern = `^r[0-9]+$`
			p["caller"].Pattern = customerPattern
		})}, st.cancel)
	mcp.AddTool(s, &mcp.Tool{Name: "stock", Description: "Shows what is in stock.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: schemaFor[StockIn](func(p map[string]*jsonschema.Schema) {
			p["sku"].Pattern = skuPattern
		})}, st.list)
	return s
}

type reservation struct {
	sku      string
	quantity int
	customer string
}

// store is the server's business state.
type store struct {
	mu           sync.Mutex
	next         int
	stock        map[string]int
	reservations map[string]reservation
}

func (s *store) reserve(ctx context.Context, req *mcp.CallToolRequest, in ReserveIn) (*mcp.CallToolResult, ReserveOut, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Business checks the schema cannot express. Messages name
	// the rule, never the caller's values.
	have, ok := s.stock[in.SKU]
	if !ok {
		return nil, ReserveOut{}, errors.New("unknown article: call stock to see the articles")
	}
	if in.Quantity > have {
		return nil, ReserveOut{}, fmt.Errorf("insufficient stock: %d left", have)
	}
	s.next++
	id := "r" + strconv.Itoa(s.next)
	s.stock[in.SKU] = have - in.Quantity
	s.reservations[id] = reservation{sku: in.SKU, quantity: in.Quantity, customer: in.Customer}
	return nil, ReserveOut{ReservationID: id, Remaining: have - in.Quantity}, nil
}

func (s *store) cancel(ctx context.Context, req *mcp.CallToolRequest, in CancelIn) (*mcp.CallToolResult, CancelOut, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reservations[in.ReservationID]
	if !ok {
		return nil, CancelOut{}, errors.New("not found: no reservation with that id")
	}
	// The server's own permission check, for a schema-valid call.
	if r.customer != in.Caller {
		return nil, CancelOut{}, errors.New("permission denied: only the customer who reserved may cancel")
	}
	delete(s.reservations, in.ReservationID)
	s.stock[r.sku] += r.quantity
	return nil, CancelOut{Remaining: s.stock[r.sku]}, nil
}

func (s *store) list(ctx context.Context, req *mcp.CallToolRequest, in StockIn) (*mcp.CallToolResult, StockOut, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := StockOut{Stock: map[string]int{}}
	skus := make([]string, 0, len(s.stock))
	for sku := range s.stock {
		skus = append(skus, sku)
	}
	sort.Strings(skus)
	for _, sku := range skus {
		if in.SKU == "" || in.SKU == sku {
			out.Stock[sku] = s.stock[sku]
		}
	}
	if in.SKU != "" && len(out.Stock) == 0 {
		return nil, StockOut{}, errors.New("unknown article")
	}
	return nil, out, nil
}

// redactArgumentErrors keeps the caller's values out of the errors go-sdk
// gives for arguments its validation refuses: those quote the value
// (maxLength: "..." contains 81 Unicode code points), and an error must
// never echo what a caller sent (it may be a secret pasted into the wrong
// field, or a user's data, and it reaches the model and the logs). It is
// the rule of the server agt mcp new writes.
func redactArgumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					t.Text = redactValidation(t.Text)
				}
			}
		}
		return res, err
	}
}

// argumentsPrefix starts go-sdk's validation messages. It is kept: clients,
// and agt's contract checker, read it as "the arguments were refused".
const argumentsPrefix = `validating "arguments": `

// redactValidation rewrites a go-sdk validation message with the field and
// the rule only: validating "arguments": /note does not satisfy maxLength
// in the tool's input schema. The names of properties the schema does not
// declare are the caller's and are not shown. Other texts pass unchanged.
func redactValidation(text string) string {
	rest, ok := strings.CutPrefix(text, argumentsPrefix)
	if !ok {
		return text
	}
	field := "the arguments"
	parts := strings.Split(rest, ": ")
	for i, part := range parts {
		if loc, ok := strings.CutPrefix(part, "validating "); ok {
			// A location in the schema ("root", "/properties/note"), never
			// a value.
			if p, ok := strings.CutPrefix(loc, "/properties/"); ok {
				field = "/" + strings.ReplaceAll(p, "/properties/", "/")
			}
			continue
		}
		// The rule: the words before the first value ("maxLength", "type").
		rule := part
		if j := strings.IndexFunc(rule, notRuleWord); j >= 0 {
			rule = rule[:j]
		}
		switch rule = strings.TrimSpace(rule); {
		case rule == "required" && i+2 < len(parts):
			// The names missing are the schema's own.
			return argumentsPrefix + "missing required properties " + parts[i+2]
		case strings.HasPrefix(rule, "unexpected additional properties"):
			return argumentsPrefix + "properties the schema does not declare (their names are not shown)"
		case rule != "":
			return argumentsPrefix + field + " does not satisfy " + rule + " in the tool's input schema"
		}
		break
	}
	return argumentsPrefix + "the arguments do not satisfy the tool's input schema"
}

func notRuleWord(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == ' ') }
