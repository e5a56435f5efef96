package agtresponses

import (
	"context"

	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/run"
)

// Execute runs the function_call items of a response as one batch of r
// (Batch, with the response's ID as the batch ID and r's agent) and
// returns the Outcome with the input items that answer every call
// (Results): the whole input of the next request when the API keeps the
// conversation (previous_response_id), or what follows the response's
// output items when the host keeps it.
//
// A batch the Run rejects whole (a *run.BatchError: a name it does not
// offer, a duplicate call ID) is not an error here: the Outcome holds a
// failed Result per call, so the reply still answers every call and the
// model reads why. The error is non-nil only when the loop must stop: the
// Run is closed (run.ErrClosed) or ctx ended. The reply then still
// answers every call, for a host that keeps the history.
//
// A response without function_call items (the model is done, or it
// called only tools the host declared itself, which are the host's to
// answer) runs nothing: the Outcome is empty, the reply nil and the error
// nil. A loop stops when the reply is empty.
func Execute(ctx context.Context, r *run.Run, resp *responses.Response) (run.Outcome, []responses.ResponseInputItemUnionParam, error) {
	if resp == nil {
		return run.Outcome{}, nil, nil
	}
	out, ran, err := modelconv.Execute(ctx, r, Batch(resp.ID, r.Agent(), resp.Output))
	if !ran {
		return run.Outcome{}, nil, nil
	}
	return out, Results(out), err
}
