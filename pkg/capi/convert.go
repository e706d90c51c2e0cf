package capi

import (
	"encoding/json"
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 management clusters are still common: reading falls back to it
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
)

// Flux labels the objects it applies with the name and namespace of the
// Kustomization or HelmRelease that applied them.
func ownerLabels() []struct{ kind, name, namespace string } {
	return []struct{ kind, name, namespace string }{
		{"Kustomization", "kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace"},
		{"HelmRelease", "helm.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/namespace"},
	}
}

func declaredBy(labels map[string]string) string {
	for _, l := range ownerLabels() {
		if name := labels[l.name]; name != "" {
			return l.kind + "/" + labels[l.namespace] + "/" + name
		}
	}
	return ""
}

// Provider derives the infrastructure provider from the kind of the
// infrastructure object: AWSCluster and AWSManagedCluster are "aws",
// VSphereCluster is "vsphere", and so on.
func Provider(kind string) string {
	k := strings.ToLower(kind)
	for _, suffix := range []string{"managedcluster", "cluster"} {
		if p, ok := strings.CutSuffix(k, suffix); ok && p != "" {
			return p
		}
	}
	return k
}

func replicas(desired, ready, available *int32) *fleet.Replicas {
	if desired == nil && ready == nil && available == nil {
		return nil
	}
	v := func(p *int32) int32 {
		if p == nil {
			return 0
		}
		return *p
	}
	return &fleet.Replicas{Desired: v(desired), Ready: v(ready), Available: v(available)}
}

func childFromV1beta2(c *clusterv1.Cluster) fleet.Child {
	ch := fleet.Child{
		Name:             c.Name,
		Namespace:        c.Namespace,
		Provider:         Provider(c.Spec.InfrastructureRef.Kind),
		Version:          c.Spec.Topology.Version,
		Phase:            c.Status.Phase,
		DeclaredBy:       declaredBy(c.Labels),
		Labels:           c.Labels,
		KubeconfigSecret: KubeconfigSecretName(c.Name),
	}
	if cond := apimeta.FindStatusCondition(c.Status.Conditions, clusterv1.AvailableCondition); cond != nil {
		ch.Available = string(cond.Status)
	}
	if cp := c.Status.ControlPlane; cp != nil {
		ch.ControlPlane = replicas(cp.DesiredReplicas, cp.ReadyReplicas, cp.AvailableReplicas)
	}
	if w := c.Status.Workers; w != nil {
		ch.Workers = replicas(w.DesiredReplicas, w.ReadyReplicas, w.AvailableReplicas)
	}
	return ch
}

func childFromV1beta1(c *clusterv1beta1.Cluster) fleet.Child {
	ch := fleet.Child{
		Name:             c.Name,
		Namespace:        c.Namespace,
		Phase:            c.Status.Phase,
		DeclaredBy:       declaredBy(c.Labels),
		Labels:           c.Labels,
		KubeconfigSecret: KubeconfigSecretName(c.Name),
	}
	if c.Spec.InfrastructureRef != nil {
		ch.Provider = Provider(c.Spec.InfrastructureRef.Kind)
	}
	if c.Spec.Topology != nil {
		ch.Version = c.Spec.Topology.Version
	}
	if v := c.Status.V1Beta2; v != nil {
		if cond := apimeta.FindStatusCondition(v.Conditions, clusterv1.AvailableCondition); cond != nil {
			ch.Available = string(cond.Status)
		}
		if cp := v.ControlPlane; cp != nil {
			ch.ControlPlane = replicas(cp.DesiredReplicas, cp.ReadyReplicas, cp.AvailableReplicas)
		}
		if w := v.Workers; w != nil {
			ch.Workers = replicas(w.DesiredReplicas, w.ReadyReplicas, w.AvailableReplicas)
		}
	}
	return ch
}

func parseGitVersion(body []byte) (string, error) {
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("failed to decode /version: %w", err)
	}
	return v.GitVersion, nil
}
