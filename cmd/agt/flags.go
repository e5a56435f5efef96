package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Bounds on what one command line may carry; everything from outside is
// bounded.
const (
	maxRepeated = 256     // occurrences of one repeatable flag
	maxJSONArg  = 1 << 20 // bytes of a JSON argument (--data, agent call)
)

// stringList is a repeatable flag: --arg a --arg b.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	if len(*s) >= maxRepeated {
		return fmt.Errorf("given more than %d times", maxRepeated)
	}
	*s = append(*s, v)
	return nil
}

// commaList is a flag holding a comma-separated list, repeatable:
// --mcps a,b --mcps c. An empty value gives an empty, non-nil list.
type commaList struct {
	items []string
	set   bool
}

func (c *commaList) String() string { return strings.Join(c.items, ",") }

func (c *commaList) Set(v string) error {
	c.set = true
	if c.items == nil {
		c.items = []string{}
	}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if len(c.items) >= maxRepeated {
			return fmt.Errorf("holds more than %d items", maxRepeated)
		}
		c.items = append(c.items, item)
	}
	return nil
}

// pairList is a repeatable KEY<sep>VALUE flag: --env K=V, --header "K: V".
type pairList struct {
	sep   string
	what  string // "K=V" for the error message
	keys  []string
	value map[string]string
}

func newPairList(sep, what string) *pairList {
	return &pairList{sep: sep, what: what}
}

func (p *pairList) String() string {
	if p == nil {
		return ""
	}
	return strings.Join(p.keys, ",")
}

func (p *pairList) Set(v string) error {
	k, val, ok := strings.Cut(v, p.sep)
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		// Never echo the value: it may be a secret.
		return fmt.Errorf("want %s", p.what)
	}
	if p.sep == ":" {
		val = strings.TrimSpace(val)
	}
	if p.value == nil {
		p.value = map[string]string{}
	}
	if _, dup := p.value[k]; !dup {
		if len(p.keys) >= maxRepeated {
			return fmt.Errorf("given more than %d times", maxRepeated)
		}
		p.keys = append(p.keys, k)
	}
	p.value[k] = val
	return nil
}

// optionalBool is a flag that records whether it was given: --enabled=false
// differs from no --enabled.
type optionalBool struct {
	value bool
	set   bool
}

func (b *optionalBool) IsBoolFlag() bool { return true }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("want true or false")
	}
	b.value, b.set = x, true
	return nil
}

// shorthands are the flags that are another name of a long one, as
// people type them from claude mcp and codex mcp: -e K=V is --env K=V,
// --client-id is --oauth-client-id.
var shorthands = map[string]string{
	"e": "env", "H": "header", "t": "transport", "s": "scope",
	"client-id": "oauth-client-id", "client-secret": "oauth-client-secret",
}

// defineShorthands gives the long flags of fs that have a shorthand that
// name too, sharing the same value.
func defineShorthands(fs *flag.FlagSet) {
	for short, long := range shorthands {
		if f := fs.Lookup(long); f != nil && fs.Lookup(short) == nil {
			fs.Var(f.Value, short, "short for --"+long)
		}
	}
}

// given reports whether the flag named name, or its shorthand, appeared on
// the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name || shorthands[f.Name] == name {
			found = true
		}
	})
	return found
}
