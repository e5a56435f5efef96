package run

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/agtsdk/agt/resource"
)

// RefreshReport says what happened at a batch boundary (SPEC R7).
type RefreshReport struct {
	// OK reports whether the Run switched to the new configuration.
	OK bool
	// Notice is, on failure, "configuration saved, but load failed: " and
	// which mount failed and why; the host shows it to the model. It holds
	// no server's stderr unless Options.ServerStderrToModel. Empty on
	// success.
	Notice string
	// Err is the failure, nil on success. Its message holds the stderr
	// tail of a server that wrote on stderr, once.
	Err error
	// Failures lists the mounts that failed to load (on failure).
	Failures []MountError
	// Added, Removed and Replaced list the mounts that were connected,
	// closed, or reconnected because their resource changed (on success).
	Added, Removed, Replaced []resource.Ref
	// Fingerprint is the Run's fingerprint after the boundary.
	Fingerprint string
}

// loadFailedPrefix starts every failed refresh notice (SPEC R7.2).
const loadFailedPrefix = "configuration saved, but load failed: "

// needsRefresh reports whether a successful call changed this agent's
// document or an MCP resource mounted in s (SPEC R7.1). Changes to other
// resources never refresh a running Run (R7.5).
func (r *Run) needsRefresh(s *snapshot, results []Result) bool {
	for i := range results {
		if results[i].Failed() {
			continue
		}
		for _, k := range results[i].Changed {
			switch k.Kind {
			case resource.KindAgent:
				if k.Ref == r.agent {
					return true
				}
			case resource.KindMCP:
				if _, ok := s.mounts[k.Ref]; ok {
					return true
				}
				if _, ok := s.failedAt[k.Ref]; ok {
					return true
				}
			}
		}
	}
	return false
}

// refresh builds a candidate snapshot from the current configuration and
// switches to it only when it is complete; otherwise it keeps the old one
// (SPEC R7.2). Mounts whose resource revision is unchanged keep their
// connection. Connections of removed and replaced mounts are closed after
// the switch, once no batch uses them.
func (r *Run) refresh(ctx context.Context, batchID string) *RefreshReport {
	r.refreshMu.Lock()
	start := time.Now()
	old := r.snap.Load()
	rep := &RefreshReport{}
	var retire []*mount
	if r.closed.Load() {
		rep.Err = ErrClosed
	} else {
		cand, fresh, err := r.build(ctx, old)
		if err == nil {
			err = refreshFailures(old, cand, rep)
		}
		if err != nil {
			closeMounts(fresh)
			rep.Err = err
		} else {
			r.snap.Store(cand)
			retire = diffMounts(old, cand, rep)
			for _, m := range retire {
				r.retiring[m] = struct{}{}
			}
			rep.OK = true
		}
	}
	rep.Fingerprint = r.snap.Load().fp.sum
	r.refreshMu.Unlock()
	if len(retire) > 0 {
		// Wait for the batches that still use the old snapshot, then
		// unload. Not under refreshMu: Close must not wait for those
		// batches (it closes the retiring mounts itself).
		old.inUse.Lock()
		closeMounts(retire)
		old.inUse.Unlock()
		r.refreshMu.Lock()
		for _, m := range retire {
			delete(r.retiring, m)
		}
		r.refreshMu.Unlock()
	}
	if rep.Err != nil {
		rep.Notice = loadFailedPrefix + r.modelText(rep.Err)
	}
	if r.auditor != nil {
		rec := Record{Event: EventRefresh, Time: start, Agent: r.agent, BatchID: batchID, Duration: time.Since(start)}
		if !rep.OK {
			// The audit is for the host's people: it keeps the stderr
			// tails the model's Notice may leave out.
			rec.Message = loadFailedPrefix + rep.Err.Error()
			rec.Code = CodeOf(rep.Err)
			if len(rep.Failures) > 0 {
				rec.Code = CodeUnavailable
			}
		}
		r.audit(ctx, rec)
	}
	return rep
}

// refreshFailures returns an error naming every mount of cand that failed
// and was not already failing at the same revision in old.
func refreshFailures(old, cand *snapshot, rep *RefreshReport) error {
	var errs mountFailures
	for _, f := range cand.failed {
		if rev, ok := old.failedAt[f.Ref]; ok && rev == cand.failedAt[f.Ref] {
			continue // unchanged and already failing: not this refresh's fault
		}
		rep.Failures = append(rep.Failures, f)
		errs = append(errs, f)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// mountFailures is the error of a refresh whose mounts failed: their
// messages joined by "; ". It keeps each MountError in the chain, so that
// errors.Is and errors.As, and the text made for the model, see them.
type mountFailures []error

func (m mountFailures) Error() string {
	parts := make([]string, len(m))
	for i, err := range m {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (m mountFailures) Unwrap() []error { return m }

// diffMounts fills the report's lists and returns the old mounts to close.
func diffMounts(old, cand *snapshot, rep *RefreshReport) []*mount {
	var closing []*mount
	for ref, m := range old.mounts {
		nm, ok := cand.mounts[ref]
		switch {
		case !ok:
			rep.Removed = append(rep.Removed, ref)
			closing = append(closing, m)
		case nm != m:
			rep.Replaced = append(rep.Replaced, ref)
			closing = append(closing, m)
		}
	}
	for ref := range cand.mounts {
		if _, ok := old.mounts[ref]; !ok {
			rep.Added = append(rep.Added, ref)
		}
	}
	for _, l := range [][]resource.Ref{rep.Added, rep.Removed, rep.Replaced} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	return closing
}
