package run

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agtsdk/agt/resource"
)

// RefreshReport says what happened at a batch boundary.
type RefreshReport struct {
	// OK reports whether the Run switched to the whole saved
	// configuration. A refresh that failed may still have switched to
	// remove mounts (Removed), and a refresh may be OK while a lost mount
	// failed to restart (Failures).
	OK bool
	// Notice is, when anything failed, "configuration saved, but load
	// failed: " and which mount failed and why, for the model. It holds no
	// server's output (stderr, a non-JSON stdout line) unless
	// Options.ServerStderrToModel. Empty when nothing failed.
	Notice string
	// Err is the failure of the saved configuration, nil when it loaded
	// (or the Run closed: ErrClosed). Its message holds the output of a
	// server that wrote on stderr (or non-JSON on stdout), once.
	Err error
	// Failures lists the mounts that failed to load, and the lost mounts
	// that failed to restart.
	Failures []MountError
	// Added, Removed, Replaced and Restarted list the mounts that were
	// connected, closed, reconnected because their resource changed, and
	// reconnected because their connection was lost.
	Added, Removed, Replaced, Restarted []resource.Ref
	// Relisted lists the mounts whose tools were listed again on their
	// live connection because their server said they changed
	// (notifications/tools/list_changed).
	Relisted []resource.Ref
	// Fingerprint is the Run's fingerprint after the boundary.
	Fingerprint string
}

// loadFailedPrefix starts every failed refresh notice.
const loadFailedPrefix = "configuration saved, but load failed: "

// retryHint ends the notice of a refresh that left the Run behind its
// saved configuration.
const retryHint = "; the tools of the failed mounts are unchanged; fix the cause and write the agent or the server again to retry"

// needsRefresh reports whether the boundary after a batch on s refreshes:
// a successful call changed this agent's document or an MCP resource
// mounted or failing in s (changes to other resources never
// refresh a running Run); or, while the Run is behind its saved
// configuration, a call wrote one of those or a pending mount, even
// without a change (an explicit retry): a fullRefresh. Or a lost mount may
// be restarted: restartOnly.
func (r *Run) needsRefresh(s *snapshot, results []Result) (refreshKind, bool) {
	r.mu.Lock()
	behind, pending := r.behind, r.pending
	r.mu.Unlock()
	concerns := func(k resource.Key) bool {
		switch k.Kind {
		case resource.KindAgent:
			return k.Ref == r.agent
		case resource.KindMCP:
			_, mounted := s.mounts[k.Ref]
			_, failing := s.failedAt[k.Ref]
			return mounted || failing || pending[k.Ref]
		}
		return false
	}
	for i := range results {
		if results[i].Failed() {
			continue
		}
		for _, k := range results[i].Changed {
			if concerns(k) {
				return fullRefresh, true
			}
		}
		if behind {
			for _, k := range results[i].Written {
				if concerns(k) {
					return fullRefresh, true
				}
			}
		}
	}
	return restartOnly, r.restartDue(s)
}

// refreshKind says what a boundary does: load the saved configuration
// (which restarts lost mounts too), or only restart lost mounts from the
// documents they were connected with.
type refreshKind int

const (
	fullRefresh refreshKind = iota
	restartOnly
)

// refresh, for a fullRefresh, builds a candidate snapshot from the saved
// configuration and switches to it only when it is complete;
// otherwise it keeps the old mounts, minus the ones the configuration
// removed. Mounts whose resource revision is unchanged keep their
// connection; lost ones are restarted. A restartOnly refresh reconnects
// the lost mounts alone, each with the document it had, and loads no
// other change. Refreshes run one at a time, outside every lock a batch
// or Close takes, under a context that Close cancels.
func (r *Run) refresh(ctx context.Context, batchID string, kind refreshKind) *RefreshReport {
	start := time.Now()
	rep := &RefreshReport{}
	r.mu.Lock()
	if r.closed.Load() {
		rep.Err = ErrClosed
	} else {
		r.work.Add(1)
		defer r.work.Done()
	}
	r.mu.Unlock()
	var restartFailed []MountError
	if rep.Err == nil {
		select {
		case r.refreshing <- struct{}{}:
			restartFailed = r.refreshOne(ctx, rep, kind)
			<-r.refreshing
		case <-ctx.Done():
			rep.Err = context.Cause(ctx)
			if kind == fullRefresh {
				r.mu.Lock()
				r.behind = true // the write that asked for it can be repeated
				r.mu.Unlock()
			}
		case <-r.life.Done():
			rep.Err = ErrClosed
		}
	}
	rep.Fingerprint = r.snap.Load().fp.sum
	var notes []string
	if rep.Err != nil && !errors.Is(rep.Err, ErrClosed) {
		notes = append(notes, r.modelText(rep.Err)+retryHint)
	}
	for _, f := range restartFailed {
		notes = append(notes, failedVerb(f)+r.modelText(f))
	}
	if len(notes) > 0 {
		rep.Notice = loadFailedPrefix + strings.Join(notes, "; ")
	}
	if r.auditor != nil {
		rec := Record{Event: eventRefresh, Time: start, Agent: r.agent, RunID: r.runID, BatchID: batchID, Duration: time.Since(start),
			Refresh: rep}
		// The audit is for the host's people: it keeps the server output the
		// model's Notice may leave out.
		var full []string
		if rep.Err != nil && !errors.Is(rep.Err, ErrClosed) {
			full = append(full, rep.Err.Error())
		}
		for _, f := range restartFailed {
			full = append(full, failedVerb(f)+f.Error())
		}
		if len(full) > 0 {
			rec.Message = loadFailedPrefix + strings.Join(full, "; ")
		}
		if rep.Err != nil {
			rec.Code = CodeOf(rep.Err)
			if len(rep.Failures) > 0 {
				rec.Code = CodeUnavailable
			}
		} else if len(rep.Failures) > 0 {
			rec.Code = CodeUnavailable
		}
		r.audit(ctx, rec)
	}
	return rep
}

// failedVerb says what failed for a mount that kept its old tools: a
// restart, or re-listing after its server said its tools changed.
func failedVerb(f MountError) string {
	var re *relistError
	if errors.As(f.Err, &re) {
		return "re-listing the tools of "
	}
	return "restarting "
}

// failed lists the references of the report's Failures.
func (rep *RefreshReport) failed() []resource.Ref {
	var refs []resource.Ref
	for _, f := range rep.Failures {
		refs = append(refs, f.Ref)
	}
	return refs
}

// refreshOne is one refresh, holding the refresh token. It returns the
// lost mounts that failed to restart (also in rep.Failures).
func (r *Run) refreshOne(ctx context.Context, rep *RefreshReport, kind refreshKind) (restartFailed []MountError) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.life, cancel)()
	old := r.snap.Load()
	var next *snapshot
	var fresh, keep []*mount
	if kind == restartOnly {
		next, fresh = r.restartLost(bctx, old)
		keep = fresh
		rep.OK = true
		if next != nil {
			restartFailed = next.restartFailed
		}
	} else {
		cand, built, err := r.build(bctx, old)
		fresh = built
		if err == nil {
			err = refreshFailures(old, cand, rep)
		}
		next, keep = cand, fresh
		if err != nil {
			rep.Err = err
			next, keep = r.fallback(old, cand)
		} else {
			rep.OK = true
		}
		switch {
		case next != nil:
			restartFailed = next.restartFailed
		case cand != nil:
			restartFailed = cand.restartFailed // kept as they were: the old lost mounts
		}
	}
	rep.Failures = append(rep.Failures, restartFailed...)
	closeMounts(without(fresh, keep))

	r.mu.Lock()
	if r.closed.Load() {
		r.mu.Unlock()
		closeMounts(keep)
		*rep = RefreshReport{Err: ErrClosed}
		return nil
	}
	var free []*mount
	if next != nil {
		r.hold(next)
		r.snap.Store(next)
		diffMounts(old, next, rep)
		old.use.Lock()
		old.use.replaced = true
		inUse := old.use.n > 0
		old.use.Unlock()
		if inUse {
			r.replaced[old] = struct{}{} // the last batch to leave lets go
		} else {
			free = r.letGo(old)
		}
	}
	if kind == fullRefresh {
		r.behind = !rep.OK
		r.pending = nil
		if !rep.OK {
			r.pending = map[resource.Ref]bool{}
			for _, f := range rep.Failures {
				r.pending[f.Ref] = true
			}
		}
	}
	r.mu.Unlock()
	closeMounts(free)
	return restartFailed
}

// restartLost reconnects the lost mounts of old that may be restarted now,
// each with the document it was connected with, in parallel. It returns
// nil when there was none; else a candidate that differs from old only in
// those mounts (a failed restart keeps the lost mount and is listed in
// restartFailed), and the new mounts.
func (r *Run) restartLost(ctx context.Context, old *snapshot) (*snapshot, []*mount) {
	var lost, stale []*mount
	for _, ref := range old.refs {
		m := old.mounts[ref]
		switch {
		case m == nil:
		case !m.lost() && r.toolsStale(m):
			stale = append(stale, m)
		case m.lost() && r.takeRestart(m):
			lost = append(lost, m)
		}
	}
	if len(lost) == 0 && len(stale) == 0 {
		return nil, nil
	}
	type restarted struct {
		m    *mount
		merr *MountError
	}
	out := make([]restarted, len(lost)+len(stale))
	var wg sync.WaitGroup
	for i, m := range lost {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nm, merr := r.connectMount(ctx, m.ref, m.revision, m.server)
			out[i] = restarted{nm, merr}
		}()
	}
	for i, m := range stale {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nm, merr := r.relistMount(ctx, m)
			out[len(lost)+i] = restarted{nm, merr}
		}()
	}
	wg.Wait()
	cand := old.derive()
	var fresh []*mount
	for _, o := range out {
		if o.merr != nil {
			cand.restartFailed = append(cand.restartFailed, *o.merr)
			continue
		}
		cand.mounts[o.m.ref] = o.m
		cand.restarted = append(cand.restarted, o.m.ref)
		fresh = append(fresh, o.m)
	}
	fresh = r.boundRestarts(cand, old, fresh)
	cand.index(r.hostTools, cand.refs)
	cand.fp = r.static.fingerprint(r.agent, cand.list)
	return cand, fresh
}

// derive returns a snapshot with s's configuration and mounts, to be
// changed and indexed.
func (s *snapshot) derive() *snapshot {
	d := &snapshot{
		refs:     s.refs,
		manage:   s.manage,
		mounts:   maps.Clone(s.mounts),
		failed:   s.failed,
		failedAt: maps.Clone(s.failedAt),
		byAlias:  map[string]*tool{},
	}
	return d
}

// boundRestarts holds a candidate whose restarted mounts may list more
// than the mounts they replace to the Run-wide bounds: counted in the
// agent's order, a restarted mount that goes past them is undone (the lost
// one stays, its restart reported as failed) and closed. It returns the
// restarted mounts that stay.
func (r *Run) boundRestarts(cand, old *snapshot, fresh []*mount) []*mount {
	var tools, bytes int
	var undone []*mount
	for _, ref := range cand.refs {
		m := cand.mounts[ref]
		if m == nil {
			continue
		}
		tools += m.listedTools
		bytes += m.listedBytes
		lerr := r.overRunBounds(tools, bytes)
		if lerr == nil || old.mounts[ref] == nil || old.mounts[ref] == m {
			continue
		}
		tools -= m.listedTools - old.mounts[ref].listedTools
		bytes -= m.listedBytes - old.mounts[ref].listedBytes
		cand.mounts[ref] = old.mounts[ref]
		cand.restarted = slices.DeleteFunc(cand.restarted, func(x resource.Ref) bool { return x == ref })
		cand.restartFailed = append(cand.restartFailed, MountError{Ref: ref, Err: lerr})
		undone = append(undone, m)
	}
	closeMounts(undone)
	return without(fresh, undone)
}

// fallback is what a failed refresh switches to: the old snapshot's mounts
// that the saved configuration still names, so removals always take
// effect, with the lost mounts the candidate restarted; additions and
// changes are not applied. It returns nil when that is the old snapshot
// as it was, and the candidate's mounts it keeps.
func (r *Run) fallback(old, cand *snapshot) (*snapshot, []*mount) {
	if cand == nil {
		return nil, nil
	}
	s := &snapshot{
		refs:     cand.refs,
		manage:   old.manage,
		mounts:   make(map[resource.Ref]*mount, len(cand.refs)),
		failedAt: map[resource.Ref]int64{},
		byAlias:  map[string]*tool{},
	}
	var keep []*mount
	changed := false
	for _, ref := range cand.refs {
		om := old.mounts[ref]
		switch cm := cand.mounts[ref]; {
		case om != nil && cm != nil && cm.revision == om.revision && cm != om:
			s.mounts[ref] = cm // restarted
			s.restarted = append(s.restarted, ref)
			keep = append(keep, cm)
			changed = true
		case om != nil:
			s.mounts[ref] = om
		case hasFailed(old, ref):
			s.failedAt[ref] = old.failedAt[ref]
			for _, f := range old.failed {
				if f.Ref == ref {
					s.failed = append(s.failed, f)
				}
			}
		}
	}
	for _, f := range cand.restartFailed {
		if s.mounts[f.Ref] != nil {
			s.restartFailed = append(s.restartFailed, f)
		}
	}
	if len(s.mounts) != len(old.mounts) || len(s.failed) != len(old.failed) {
		changed = true // removals
	}
	if !changed {
		return nil, nil
	}
	keep = r.boundRestarts(s, old, keep)
	s.index(r.hostTools, cand.refs)
	s.fp = r.static.fingerprint(r.agent, s.list)
	return s, keep
}

func hasFailed(s *snapshot, ref resource.Ref) bool {
	_, ok := s.failedAt[ref]
	return ok
}

// without returns the mounts of all that are not in keep.
func without(all, keep []*mount) []*mount {
	if len(keep) == 0 {
		return all
	}
	var out []*mount
	for _, m := range all {
		kept := false
		for _, k := range keep {
			kept = kept || k == m
		}
		if !kept {
			out = append(out, m)
		}
	}
	return out
}

// refreshFailures returns an error naming every mount of cand that failed
// and was not already failing at the same revision in old. Lost mounts
// that failed to restart are reported apart: they never fail a refresh.
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

// diffMounts fills the report's lists.
func diffMounts(old, cand *snapshot, rep *RefreshReport) {
	restarted := map[resource.Ref]bool{}
	for _, ref := range cand.restarted {
		restarted[ref] = true
	}
	for ref, m := range old.mounts {
		nm, ok := cand.mounts[ref]
		switch {
		case !ok:
			rep.Removed = append(rep.Removed, ref)
		case nm != m && nm.relisted && nm.session == m.session:
			rep.Relisted = append(rep.Relisted, ref)
		case nm != m && restarted[ref]:
			rep.Restarted = append(rep.Restarted, ref)
		case nm != m:
			rep.Replaced = append(rep.Replaced, ref)
		}
	}
	for ref := range cand.mounts {
		if _, ok := old.mounts[ref]; !ok {
			rep.Added = append(rep.Added, ref)
		}
	}
	for _, l := range [][]resource.Ref{rep.Added, rep.Removed, rep.Replaced, rep.Restarted, rep.Relisted} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
}

// mergeReports folds the report of the restarts done before a batch into
// the report of the refresh after it, in new slices: one Outcome says
// both, and neither report's slices (the audit holds them) change.
func mergeReports(before, after *RefreshReport) *RefreshReport {
	if before == nil {
		return after
	}
	joined := func(a, b []resource.Ref) []resource.Ref {
		out := slices.Concat(a, b)
		slices.Sort(out)
		return slices.Compact(out)
	}
	m := *after
	m.OK = before.OK && after.OK
	if m.Err == nil {
		m.Err = before.Err
	}
	m.Added = joined(before.Added, after.Added)
	m.Removed = joined(before.Removed, after.Removed)
	m.Replaced = joined(before.Replaced, after.Replaced)
	m.Restarted = joined(before.Restarted, after.Restarted)
	m.Relisted = joined(before.Relisted, after.Relisted)
	m.Failures = slices.Concat(before.Failures, after.Failures)
	switch {
	case before.Notice == "":
	case after.Notice == "":
		m.Notice = before.Notice
	default:
		m.Notice = after.Notice + "; " + strings.TrimPrefix(before.Notice, loadFailedPrefix)
	}
	return &m
}
