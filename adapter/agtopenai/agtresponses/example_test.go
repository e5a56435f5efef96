package agtresponses_test

import (
	"context"
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agtsdk/agt/adapter/agtopenai/agtresponses"
	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/run"
)

// The model loop of the package doc, with the conversation kept by the
// API (previous_response_id). It compiles; it is not run (it would call
// the API).
func Example() {
	ctx, client := context.Background(), openai.NewClient()
	var r *run.Run // from Host.NewRun
	agent, model := resource.Ref("writer"), "gpt-5"
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
			b := agtresponses.Batch(resp.ID, agent, resp.Output)
			if len(b.Calls) == 0 {
				return nil // the model is done
			}
			out, err := r.Execute(ctx, b)
			if errors.As(err, new(*run.BatchError)) {
				err = nil // rejected whole: out still answers every call
			}
			if err != nil {
				return err
			}
			prev, input = param.NewOpt(resp.ID), agtresponses.Results(out)
		}
	}
	_ = loop
}
