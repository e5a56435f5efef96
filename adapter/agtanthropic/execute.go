package agtanthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agtsdk/agt/adapter/internal/modelconv"
	"github.com/agtsdk/agt/run"
)

// Execute runs the tool_use blocks of msg as one batch of r (Batch, with
// msg.ID as the batch ID and r's agent) and returns the Outcome and the
// user message that answers every call (Results), to append to the
// history and send.
//
// A rejected batch (*run.BatchError) is not an error here: its Outcome
// holds a failed Result for each call, so reply answers every tool_use
// and the model reads why ([run.Run.Execute] documents the idiom). The
// error is non-nil only when the loop must stop: the Run is closed
// (run.ErrClosed) or ctx ended; reply still answers every call.
//
// A msg with no tool_use block (a nil msg too) runs nothing: the Outcome
// has no Results, reply is the zero MessageParam (send nothing: the model
// is done) and the error is nil. A loop ends on len(out.Results) == 0.
func Execute(ctx context.Context, r *run.Run, msg *sdk.Message) (out run.Outcome, reply sdk.MessageParam, err error) {
	out, ran, err := modelconv.Execute(ctx, r, Batch(msgID(msg), r.Agent(), msg))
	if !ran {
		return run.Outcome{}, sdk.MessageParam{}, nil
	}
	return out, sdk.NewUserMessage(Results(out)...), err
}

func msgID(msg *sdk.Message) string {
	if msg == nil {
		return ""
	}
	return msg.ID
}
