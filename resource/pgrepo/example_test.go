package pgrepo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/agtsdk/agt/resource"
	"github.com/agtsdk/agt/resource/pgrepo"
)

// Open a repository on PostgreSQL and save with a compare-and-set. It needs a
// server, so it is compiled but not run by go test.
func Example() {
	ctx := context.Background()
	repo, err := pgrepo.Open(ctx, os.Getenv("AGT_POSTGRES"), &pgrepo.Options{Schema: "agt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()

	key := resource.Key{Kind: resource.KindAgent, Ref: "ops/triage"}
	res, err := repo.Create(ctx, key, json.RawMessage(`{"name":"triage","mcps":[]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// A form that read revision res.Revision saves; if someone saved in
	// between, the write is refused and the form reads again.
	_, err = repo.Update(ctx, key, json.RawMessage(`{"name":"triage","mcps":["tools/fs"]}`), res.Revision)
	var conflict *resource.ConflictError
	switch {
	case errors.As(err, &conflict):
		fmt.Println("someone saved revision", conflict.Current, "first")
	case errors.Is(err, pgrepo.ErrUnknownOutcome):
		fmt.Println("the connection broke: read the resource before trying again")
	case err != nil:
		fmt.Println(err)
	}
}

// Add one mount atomically: fn runs while the row is locked.
func ExampleRepo_Modify() {
	ctx := context.Background()
	repo, err := pgrepo.Open(ctx, os.Getenv("AGT_POSTGRES"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()

	key := resource.Key{Kind: resource.KindAgent, Ref: "ops/triage"}
	_, err = repo.Modify(ctx, key, resource.AnyRevision, func(cur resource.Resource) (json.RawMessage, error) {
		doc, err := resource.DecodeAgent(cur.Data)
		if err != nil {
			return nil, err
		}
		if slices.Contains(doc.MCPs, "tools/git") {
			return nil, nil // already mounted: write nothing
		}
		doc.MCPs = append(doc.MCPs, "tools/git")
		return json.Marshal(doc)
	})
	if err != nil {
		fmt.Println(err)
	}
}
