package render

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
)

// JSON prints the subtree at root as one indented JSON document.
func JSON(w io.Writer, root *fleet.Node) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("failed to encode the fleet as JSON: %w", err)
	}
	return nil
}

// YAML prints the subtree at root as one YAML document.
func YAML(w io.Writer, root *fleet.Node) error {
	data, err := yaml.Marshal(root)
	if err != nil {
		return fmt.Errorf("failed to encode the fleet as YAML: %w", err)
	}
	_, err = w.Write(data)
	return err
}
