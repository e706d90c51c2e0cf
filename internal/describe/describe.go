// Package describe is the model of `kubectl fleet describe PATH`: one
// cluster in depth, read from both sides. From its parent, the CAPI object
// tree of its Cluster (package capi, with clusterctl's discovery); from
// inside, its Flux objects as a tree of sources and what applies them,
// edges to the clusters that spec.kubeConfig sends them to, its live
// version and nodes, its drift findings, and the clusters it holds.
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
	// CAPI is the object tree of the Cluster on its parent; nil for the
	// root, which no Cluster object describes, or when it could not be
	// read (CAPIError).
	CAPI      *Object `json:"capi,omitempty"`
	CAPIError string  `json:"capiError,omitempty" escape:"oneline"`
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

// Part is the value of the part key, nil when there is none.
func (d *Description) Part(key string) any {
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
	fields := []field{
		{"cluster", d.Cluster, false},
		{"capi", d.CAPI, d.CAPI == nil},
		{"capiError", d.CAPIError, d.CAPIError == ""},
		{"nodes", d.Nodes, d.Nodes == nil},
		{"nodesError", d.NodesError, d.NodesError == ""},
	}
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
	return d.Cluster.Incomplete() || d.CAPIError != "" || d.ClustersError != ""
}
