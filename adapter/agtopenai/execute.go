package agtopenai

import (
	"context"

	sdk "github.com/openai/openai-go/v3"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/run"
)

// Execute runs the function tool calls of a completion's first choice as
// one batch of r (Batch, with the completion's ID as the batch ID and r's
// agent) and returns the Outcome with the messages that answer every call
// (Results), to append to the history after the assistant message
// (msg.ToParam()).
//
// A batch the Run rejects whole (a *run.BatchError: a name it does not
// offer, a duplicate call ID) is not an error here: the Outcome holds a
// failed Result per call, so the reply still answers every call and the
// model reads why. The error is non-nil only when the loop must stop: the
// Run is closed (run.ErrClosed) or ctx ended. The reply then still
// answers every call, for a host that keeps the history.
//
// A completion without choices, or whose message calls no function (the
// model is done, or it called only custom tools, which are the host's to
// answer), runs nothing: the Outcome is empty, the reply nil and the error
// nil. A loop stops when the reply is empty.
func Execute(ctx context.Context, r *run.Run, completion *sdk.ChatCompletion) (run.Outcome, []sdk.ChatCompletionMessageParamUnion, error) {
	if completion == nil || len(completion.Choices) == 0 {
		return run.Outcome{}, nil, nil
	}
	out, ran, err := modelconv.Execute(ctx, r, Batch(completion.ID, r.Agent(), completion.Choices[0].Message))
	if !ran {
		return run.Outcome{}, nil, nil
	}
	return out, Results(out), err
}
