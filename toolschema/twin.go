package toolschema

import (
	"context"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A call whose pattern matching may exceed untrackedPatternWork, or whose
// subschema evaluations may exceed untrackedEvaluations (upper bounds known
// once the arguments are decoded, see patternWorkOf and evaluationsOf),
// must be stopped by its context, and by Options.MaxValidationWork, while
// it runs. The library gives a Regexp only the string, and a vocabulary's
// keyword only the value, not the call; so such a call is validated on a
// twin: a second compiled copy of the schema whose regexps and whose
// keyword applied to every subschema (stopVocabulary) share one callWork,
// used by one call at a time. Twins are made when first needed and kept;
// at most maxTwins exist per Schema, and a call that finds them all busy
// waits for one (or for its context).

// untrackedPatternWork is the most pattern work a call may do on the shared
// compiled schema, unstoppable: about 10 ms (or Options.MaxValidationWork
// if lower).
const untrackedPatternWork = 1 << 20

// untrackedEvaluations is the most subschema evaluations a call may do on
// the shared compiled schema: about 10 ms.
const untrackedEvaluations = 5_000

// maxTwins bounds the tracked copies of one Schema, so the calls that need
// one run at most that many at a time.
const maxTwins = 2

type twin struct {
	compiled *jsonschema.Schema
	work     *callWork
}

type twinPool struct {
	slots chan struct{} // one per twin in use
	free  chan *twin
}

func newTwinPool() *twinPool {
	return &twinPool{slots: make(chan struct{}, maxTwins), free: make(chan *twin, maxTwins)}
}

// acquire returns a free twin, compiling one if fewer than maxTwins exist.
func (s *Schema) acquireTwin(ctx context.Context) (*twin, error) {
	select {
	case s.twins.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case t := <-s.twins.free:
		return t, nil
	default:
	}
	t, err := s.compileTwin()
	if err != nil {
		<-s.twins.slots
		return nil, err
	}
	return t, nil
}

func (s *Schema) releaseTwin(t *twin) {
	s.twins.free <- t
	<-s.twins.slots
}

var errTwin = errors.New("toolschema: the schema could not be compiled again")

// compileTwin compiles the schema document again, exactly as compile did
// (it succeeded then, so it does now), with regexps tracked by a new
// callWork.
func (s *Schema) compileTwin() (_ *twin, err error) {
	defer func() {
		// A meta-schema pattern over its bound failed compile already;
		// should it not, this is no place for its panic.
		var bound error
		recoverPatternBound(&bound, s.limits.patternWork)
		if bound != nil {
			err = errTwin
		}
	}()
	doc, err := decodeJSON(s.raw, s.limits.depth)
	if err != nil {
		return nil, errTwin
	}
	t := &twin{work: &callWork{}}
	c := newLibraryCompiler(s.limits, t.work)
	c.RegisterVocabulary(stopVocabulary(t.work))
	c.AssertVocabs()
	if err := c.AddResource(baseURL, doc); err != nil {
		return nil, errTwin
	}
	if t.compiled, err = c.Compile(baseURL); err != nil {
		return nil, errTwin
	}
	starts := []*jsonschema.Schema{t.compiled}
	for _, ptr := range s.positions {
		if ptr == "" {
			continue
		}
		sub, err := c.Compile(baseURL + "#" + encodeFragment(ptr))
		if err != nil {
			return nil, errTwin
		}
		starts = append(starts, sub)
	}
	useECMARegexFormat(reachableFrom(starts))
	return t, nil
}

// reachableFrom lists every schema reachable from starts.
func reachableFrom(starts []*jsonschema.Schema) []*jsonschema.Schema {
	seen := map[*jsonschema.Schema]bool{}
	var all []*jsonschema.Schema
	stack := append([]*jsonschema.Schema(nil), starts...)
	for len(stack) > 0 {
		sch := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[sch] {
			continue
		}
		seen[sch] = true
		all = append(all, sch)
		children(sch, func(sub *jsonschema.Schema, _ bool) { stack = append(stack, sub) })
	}
	return all
}

// validateTracked validates v on a twin, stopping when ctx ends or the
// matches exceed Options.MaxValidationWork.
func (s *Schema) validateTracked(ctx context.Context, v any) (verdict error) {
	t, err := s.acquireTwin(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return rootViolation("", "arguments could not be validated")
	}
	defer s.releaseTwin(t)
	*t.work = callWork{active: true, done: ctx.Done(), limit: s.limits.validationWork}
	defer func() { *t.work = callWork{} }()
	defer recoverValidation(&verdict, s.limits, ctx)
	return s.validateWith(t.compiled, v)
}

// stopVocabulary has no keyword of its own: it gives every schema object
// of a twin an extension that the library runs at each evaluation, which
// lets the call's context stop evaluations that match no pattern.
func stopVocabulary(work *callWork) *jsonschema.Vocabulary {
	return &jsonschema.Vocabulary{
		URL: "urn:agt:toolschema:stop",
		Compile: func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error) {
			return stopCheck{work}, nil
		},
	}
}

type stopCheck struct{ work *callWork }

// stopEvery is how many evaluations pass between two looks at the
// context: well under a millisecond.
const stopEvery = 64

func (c stopCheck) Validate(*jsonschema.ValidatorContext, any) {
	w := c.work
	if !w.active {
		return
	}
	w.evaluations++
	if w.evaluations%stopEvery == 0 {
		select {
		case <-w.done:
			panic(validationStopped{})
		default:
		}
	}
}
