package capi

import (
	"encoding/json"
	"testing"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // read as the walk reads it
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// FuzzClusterObject: a CAPI Cluster as a hostile apiserver may serve it,
// v1beta2 or v1beta1, becomes a child or is refused by the decoder. Never
// a panic.
func FuzzClusterObject(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"a","namespace":"b"},"spec":{"infrastructureRef":{"kind":"AWSCluster"},"topology":{"version":"v1.36.3"}},"status":{"phase":"Provisioned","controlPlane":{"desiredReplicas":3,"readyReplicas":1,"versions":[{"version":"v1","replicas":2}]}}}`,
		`{"metadata":{"name":"\u001b[2J","labels":{"x":"\u0007"}},"spec":{"infrastructureRef":{"kind":""}},"status":{"conditions":[{"type":"Available","status":"True"}]}}`,
		`{"status":{"controlPlaneReady":true,"v1beta2":{"conditions":null}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v2 clusterv1.Cluster
		if json.Unmarshal(data, &v2) == nil {
			c := childFromV1beta2(&v2)
			if c.Name != v2.Name || c.Namespace != v2.Namespace {
				t.Fatalf("child %s/%s of Cluster %s/%s", c.Namespace, c.Name, v2.Namespace, v2.Name)
			}
		}
		var v1 clusterv1beta1.Cluster
		if json.Unmarshal(data, &v1) == nil {
			_ = childFromV1beta1(&v1)
		}
	})
}
