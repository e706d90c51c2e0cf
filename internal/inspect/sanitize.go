package inspect

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
)

// lastApplied is the annotation kubectl apply keeps the applied object
// in: of a Secret, its data.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// sanitize is obj as it may be returned: without metadata.managedFields;
// if it is a Secret (secret, or its own apiVersion and kind say so),
// without data, stringData and the last-applied annotation, its keys
// listed in dataKeys instead; and, when it is larger than MaxObjectBytes
// as JSON, only its apiVersion, kind and metadata, with a note.
func sanitize(obj map[string]any, secret bool) map[string]any {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	if secret || obj["apiVersion"] == "v1" && obj["kind"] == "Secret" {
		keys := map[string]bool{}
		for _, field := range []string{"data", "stringData"} {
			if values, ok := obj[field].(map[string]any); ok {
				for k := range values {
					keys[k] = true
				}
			}
			delete(obj, field)
		}
		obj["dataKeys"] = slices.Sorted(maps.Keys(keys))
		if md, ok := obj["metadata"].(map[string]any); ok {
			if a, ok := md["annotations"].(map[string]any); ok {
				delete(a, lastApplied)
			}
		}
	}
	size := sizeOf(obj)
	if size <= MaxObjectBytes {
		return obj
	}
	short := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": obj["metadata"]}
	if keys, ok := obj["dataKeys"]; ok {
		short["dataKeys"] = keys
	}
	note := fmt.Sprintf("object of %d bytes, above the bound of %d: only its metadata is shown; its spec, status and other fields are left out", size, MaxObjectBytes)
	if sizeOf(short) > MaxObjectBytes {
		md, _ := obj["metadata"].(map[string]any)
		smaller := map[string]any{}
		for k, v := range md {
			if k != "annotations" && k != "labels" {
				smaller[k] = v
			}
		}
		short["metadata"] = smaller
		note = fmt.Sprintf("object of %d bytes, above the bound of %d: only its metadata is shown, without labels and annotations", size, MaxObjectBytes)
	}
	short["truncated"] = note
	return short
}

// sizeOf is the size of v as JSON; what does not encode counts as too
// large, so that it is cut.
func sizeOf(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return math.MaxInt
	}
	return len(b)
}
