package modelconv

import (
	"context"
	"errors"

	"github.com/agtsdk/agt/run"
)

// Execute is the Execute contract as a model loop reads it, for the
// adapters' Execute: b runs on r, and a batch the Run rejects whole (a
// *run.BatchError) is not an error, as its Outcome holds a failed Result
// for every call, which the reply sends the model. The error is non-nil
// only when the loop must stop (run.ErrClosed, ctx ended); the Outcome
// then still answers every call. A batch without calls runs nothing: ran
// is false (the model is done), and the Outcome empty.
func Execute(ctx context.Context, r *run.Run, b run.Batch) (out run.Outcome, ran bool, err error) {
	if len(b.Calls) == 0 {
		return run.Outcome{}, false, nil
	}
	out, err = r.Execute(ctx, b)
	if errors.As(err, new(*run.BatchError)) {
		err = nil
	}
	return out, true, err
}
