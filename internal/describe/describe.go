// Package describe is the model of `kubectl fleet describe PATH`: one
// cluster in depth, read from both sides. From its parent, what the
// inventory that reached it says of the object that holds it (an object
// tree: CAPI's, with clusterctl's discovery); from inside, the
// integrations' parts (Flux's objects as a tree of sources and what
// applies them), its live version and nodes, its drift findings, and the
// clusters it holds.
package describe

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Description is what describe prints.
type Description struct {
	// Cluster is the cluster's node of the walk, without its subtree.
	Cluster *fleet.Node `json:"cluster"`
	// Holder is the description, from the parent, of the object by which
	// the parent holds the cluster, by the inventory that reached it
	// (provider.Describer): under its key in JSON (the provider's name,
	// "capi": the object tree of its Cluster), its value; none for the
	// root, or when no inventory describes it. HolderError, under the key
	// + "Error", is why it could not be read.
	Holder      Part   `json:"-"`
	HolderError string `json:"-" escape:"oneline"`
	// Nodes counts the cluster's Kubernetes nodes; nil when they could
	// not be read (NodesError).
	Nodes      *fleet.Count `json:"nodes,omitempty"`
	NodesError string       `json:"nodesError,omitempty" escape:"oneline"`
	// Parts are what the integrations add to the description (Flux's
	// objects as a tree, "flux"), each under its key in JSON, here.
	Parts []Part `json:"-"`
	// Findings are the cluster's drift findings.
	Findings []drift.Finding `json:"findings"`
	// Clusters are the clusters this one holds, by every edge; nil when
	// they could not be listed. ClustersError says which edges could not
	// be listed, and why.
	Clusters      []Held `json:"clusters"`
	ClustersError string `json:"clustersError,omitempty" escape:"oneline"`
}

// Part is an integration's part of a description: its JSON key and value.
type Part struct {
	Key   string
	Value any
}

// Part is the value of the part key, nil when there is none: an
// integration's part, the holder's description, or, under the holder's
// key + "Error", why that could not be read.
func (d *Description) Part(key string) any {
	switch {
	case d.Holder.Key == "":
	case key == d.Holder.Key:
		return d.Holder.Value
	case key == d.Holder.Key+"Error":
		return d.HolderError
	}
	for _, p := range d.Parts {
		if p.Key == key {
			return p.Value
		}
	}
	return nil
}

// MarshalJSON writes the description's fields with the integrations'
// parts after the nodes.
func (d *Description) MarshalJSON() ([]byte, error) {
	type field struct {
		key   string
		value any
		omit  bool // omitempty and empty
	}
	fields := []field{{"cluster", d.Cluster, false}}
	if d.Holder.Key != "" {
		fields = append(fields,
			field{d.Holder.Key, d.Holder.Value, d.Holder.Value == nil},
			field{d.Holder.Key + "Error", d.HolderError, d.HolderError == ""})
	}
	fields = append(fields,
		field{"nodes", d.Nodes, d.Nodes == nil},
		field{"nodesError", d.NodesError, d.NodesError == ""})
	for _, p := range d.Parts {
		fields = append(fields, field{p.Key, p.Value, false})
	}
	fields = append(fields,
		field{"findings", d.Findings, false},
		field{"clusters", d.Clusters, false},
		field{"clustersError", d.ClustersError, d.ClustersError == ""})
	var b bytes.Buffer
	b.WriteByte('{')
	for _, f := range fields {
		if f.omit {
			continue
		}
		data, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("failed to encode %s of the description: %w", f.key, err)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(data)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Held is a cluster the described one holds, and by which edges.
type Held struct {
	Path      string       `json:"path"`
	Name      string       `json:"name"`
	Namespace string       `json:"namespace"`
	Edges     []fleet.Edge `json:"edges"`
}

// Incomplete reports whether some of the description could not be read.
func (d *Description) Incomplete() bool {
	return d.Cluster.Incomplete() || d.HolderError != "" || d.ClustersError != ""
}
