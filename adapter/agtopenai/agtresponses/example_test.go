package agtresponses_test

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/run"
)

// The model loop of the package doc, with the conversation kept by the
// API (previous_response_id). It compiles; it is not run (it would call
// the API).
func Example() {
	ctx, client := context.Background(), openai.NewClient()
	var r *run.Run // from Host.NewRun
	model := "gpt-5"
	loop := func() error {
		input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("tidy the notes", responses.EasyInputMessageRoleUser)}
		var prev param.Opt[string]
		for {
			resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
				Model: model, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
				PreviousResponseID: prev, Tools: agtresponses.Tools(r.Tools()),
			})
			if err != nil {
				return err
			}
			// A rejected batch is no error: reply answers every call.
			_, reply, err := agtresponses.Execute(ctx, r, resp)
			if err != nil {
				return err // the Run is closed, or ctx ended
			}
			if len(reply) == 0 {
				return nil // no function call: the model is done
			}
			prev, input = param.NewOpt(resp.ID), reply
		}
	}
	_ = loop
}
