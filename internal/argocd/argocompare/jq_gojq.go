package argocompare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
)

// jqTimeout is Argo CD's default JQ execution timeout.
const jqTimeout = time.Second

func init() {
	jqDelete = gojqDelete
}

// gojqDelete runs del(expr) on obj as Argo CD's jq normalizer patch does:
// one object out, within a second.
func gojqDelete(expr string, obj map[string]any) (map[string]any, error) {
	q, err := gojq.Parse(fmt.Sprintf("del(%s)", expr))
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	// gojq reads JSON's types only.
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), jqTimeout)
	defer cancel()
	iter := code.RunWithContext(ctx, in)
	first, ok := iter.Next()
	if !ok {
		return nil, errors.New("the jq path returned nothing")
	}
	if err, ok := first.(error); ok {
		return nil, err
	}
	if _, ok := iter.Next(); ok {
		return nil, errors.New("the jq path returned several objects")
	}
	raw, err = json.Marshal(first)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}
