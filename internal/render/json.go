package render

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// JSON prints v, a model document (a tree, a list, a report), as one
// indented JSON document.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("failed to encode as JSON: %w", err)
	}
	return nil
}

// YAML prints v as one YAML document.
func YAML(w io.Writer, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("failed to encode as YAML: %w", err)
	}
	_, err = w.Write(data)
	return err
}
