package run

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/agtsdk/agt/resource"
)

// The static parts, as named in checkpoints and mismatch errors.
const (
	partModel       = "model"
	partProvider    = "provider"
	partBasePrompt  = "base_prompt"
	partPermissions = "permissions"
	partDelegation  = "delegation"
	partTools       = "tools"
)

var staticPartNames = [...]string{partModel, partProvider, partBasePrompt, partPermissions, partDelegation}

// staticDigests holds one digest per static part, in staticPartNames order.
type staticDigests [len(staticPartNames)]string

func digestStatic(in StaticInputs) staticDigests {
	vals := [...][]byte{[]byte(in.Model), []byte(in.Provider), []byte(in.BasePrompt), in.Permissions, in.Delegation}
	var d staticDigests
	for i, v := range vals {
		sum := sha256.Sum256(v)
		d[i] = hex.EncodeToString(sum[:])
	}
	return d
}

// fingerprint is the digest of a snapshot with its parts.
type fingerprint struct {
	sum   string
	tools map[string]string // alias -> digest of (source, schema digest)
}

func (d staticDigests) fingerprint(agent resource.Ref, list []ToolInfo) fingerprint {
	h := sha256.New()
	write := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write("agt/run fingerprint v1")
	write(string(agent))
	for i, name := range staticPartNames {
		write(name)
		write(d[i])
	}
	fp := fingerprint{tools: make(map[string]string, len(list))}
	for _, t := range list { // list is sorted by alias
		td := toolDigest(t)
		fp.tools[t.Name] = td
		write(t.Name)
		write(td)
	}
	fp.sum = hex.EncodeToString(h.Sum(nil))
	return fp
}

// toolDigest covers what decides whether a call the model composed before
// a suspension is still the same call after it: the alias, where it goes
// (kind, reference, remote name) and the argument contract (the schema
// digest). Title, description, annotations, output schema and _meta are
// left out on purpose: they describe the tool to the model and the host
// (a server rewording them must not make a suspended Run unresumable, and
// existing fingerprints stay as they were), and a permission policy that
// reads annotations sees the current ones at every call anyway.
func toolDigest(t ToolInfo) string {
	sum := sha256.Sum256([]byte(string(t.Source.Kind) + "\x00" + string(t.Source.Ref) + "\x00" + t.Source.Tool + "\x00" + t.SchemaDigest))
	return hex.EncodeToString(sum[:16])
}

// Fingerprint is a digest of the host's static inputs and the current tool
// snapshot (aliases, sources, schema digests). A
// successful refresh updates it.
func (r *Run) Fingerprint() string { return r.snap.Load().fp.sum }

// Checkpoint is what a host stores when it suspends a Run, to Resume it
// later. It is plain JSON-encodable data.
type Checkpoint struct {
	// Version is the checkpoint format, 1.
	Version int `json:"version"`
	// Agent is the Run's agent.
	Agent resource.Ref `json:"agent"`
	// Fingerprint is Run.Fingerprint at the time of the checkpoint.
	Fingerprint string `json:"fingerprint"`
	// Static maps each static part (model, provider, base_prompt,
	// permissions, delegation) to its digest.
	Static map[string]string `json:"static"`
	// Tools maps each alias to the digest of its source and schema.
	Tools map[string]string `json:"tools"`
}

// Checkpoint returns the data to store for Resume.
func (r *Run) Checkpoint() Checkpoint {
	fp := r.snap.Load().fp
	cp := Checkpoint{
		Version:     1,
		Agent:       r.agent,
		Fingerprint: fp.sum,
		Static:      make(map[string]string, len(staticPartNames)),
		Tools:       make(map[string]string, len(fp.tools)),
	}
	for i, name := range staticPartNames {
		cp.Static[name] = r.static[i]
	}
	for k, v := range fp.tools {
		cp.Tools[k] = v
	}
	return cp
}

// mismatchError says which parts of a checkpoint differ from the
// current configuration. errors.Is(err, ErrFingerprintMismatch) is true.
type mismatchError struct {
	// Parts lists the differing parts: agent, model, provider, base_prompt,
	// permissions, delegation, tools.
	Parts []string
	// Added, Removed and Changed list tool aliases that differ.
	Added, Removed, Changed []string
}

// Error implements error.
func (e *mismatchError) Error() string {
	var b strings.Builder
	b.WriteString("run: fingerprint mismatch: ")
	b.WriteString(strings.Join(e.Parts, ", "))
	b.WriteString(" differ")
	for _, l := range []struct {
		name  string
		items []string
	}{{"added", e.Added}, {"removed", e.Removed}, {"changed", e.Changed}} {
		if len(l.items) > 0 {
			fmt.Fprintf(&b, "; tools %s: %s", l.name, strings.Join(l.items, ", "))
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrFingerprintMismatch) true.
func (e *mismatchError) Is(target error) bool { return target == ErrFingerprintMismatch }

// Resume builds a Run from the current configuration, as New does, and
// checks it against a checkpoint: when anything differs it closes the new
// Run and returns an error matching ErrFingerprintMismatch (errors.Is)
// whose message names the differing parts (agent, model, provider,
// base_prompt, permissions, delegation, tools) and the tool aliases
// added, removed and changed.
func Resume(ctx context.Context, cp Checkpoint, opts *Options) (*Run, error) {
	if cp.Version != 1 {
		return nil, fmt.Errorf("run: checkpoint version %d is not supported (want 1)", cp.Version)
	}
	r, err := New(ctx, opts)
	if err != nil {
		return nil, err
	}
	if r.Fingerprint() == cp.Fingerprint {
		return r, nil
	}
	mm := &mismatchError{}
	if cp.Agent != r.agent {
		mm.Parts = append(mm.Parts, "agent")
	}
	for i, name := range staticPartNames {
		if cp.Static[name] != r.static[i] {
			mm.Parts = append(mm.Parts, name)
		}
	}
	cur := r.snap.Load().fp.tools
	for alias, d := range cur {
		old, ok := cp.Tools[alias]
		switch {
		case !ok:
			mm.Added = append(mm.Added, alias)
		case old != d:
			mm.Changed = append(mm.Changed, alias)
		}
	}
	for alias := range cp.Tools {
		if _, ok := cur[alias]; !ok {
			mm.Removed = append(mm.Removed, alias)
		}
	}
	sort.Strings(mm.Added)
	sort.Strings(mm.Removed)
	sort.Strings(mm.Changed)
	if len(mm.Added)+len(mm.Removed)+len(mm.Changed) > 0 {
		mm.Parts = append(mm.Parts, partTools)
	}
	if len(mm.Parts) == 0 {
		// Same parts, different sum: the checkpoint was edited.
		mm.Parts = append(mm.Parts, "fingerprint")
	}
	_ = r.Close()
	return nil, mm
}
