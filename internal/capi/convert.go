package capi

import (
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 management clusters are still common: reading falls back to it
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux" // a Cluster's Flux ownership labels say which Flux object declares it (RecordDeclaredBy; read by drift.go's undeclared and by fluxgit): CAPI records none
)

// InfraProvider derives the infrastructure provider from the kind of the
// infrastructure object: AWSCluster and AWSManagedCluster are "aws",
// VSphereCluster is "vsphere", and so on.
func InfraProvider(kind string) string {
	k := strings.ToLower(kind)
	for _, suffix := range []string{"managedcluster", "cluster"} {
		if p, ok := strings.CutSuffix(k, suffix); ok && p != "" {
			return p
		}
	}
	return k
}

func replicas(desired, ready, available *int32, versions []clusterv1.StatusVersion) *Replicas {
	if desired == nil && ready == nil && available == nil && len(versions) == 0 {
		return nil
	}
	v := func(p *int32) int32 {
		if p == nil {
			return 0
		}
		return *p
	}
	r := &Replicas{Desired: v(desired), Ready: v(ready), Available: v(available)}
	for _, sv := range versions {
		r.Versions = append(r.Versions, VersionCount{Version: sv.Version, Replicas: sv.Replicas})
	}
	return r
}

func childFromV1beta2(c *clusterv1.Cluster) fleet.Child {
	ch := fleet.Child{
		Name:             c.Name,
		Namespace:        c.Namespace,
		Version:          c.Spec.Topology.Version,
		Labels:           c.Labels,
		KubeconfigSecret: KubeconfigSecretName(c.Name),
	}
	st := &Status{Provider: InfraProvider(c.Spec.InfrastructureRef.Kind), Phase: c.Status.Phase}
	st.refresh = refresherFor(c.Spec.ControlPlaneRef.Kind, c.Spec.Paused != nil && *c.Spec.Paused)
	if cond := apimeta.FindStatusCondition(c.Status.Conditions, clusterv1.AvailableCondition); cond != nil {
		st.Available = string(cond.Status)
	}
	if cp := c.Status.ControlPlane; cp != nil {
		st.ControlPlane = replicas(cp.DesiredReplicas, cp.ReadyReplicas, cp.AvailableReplicas, cp.Versions)
	}
	if w := c.Status.Workers; w != nil {
		st.Workers = replicas(w.DesiredReplicas, w.ReadyReplicas, w.AvailableReplicas, w.Versions)
	}
	ch.Version = declaredVersion(ch.Version, st)
	Record(&ch, st)
	flux.RecordDeclaredBy(&ch, c.Labels)
	return ch
}

// declaredVersion is a Cluster's Kubernetes version: its topology's, or,
// for a Cluster without a ClusterClass (whose version is its control
// plane's, e.g. a KubeadmControlPlane's spec.version), the one version
// its control plane machines run, as CAPI reports them; "" while they run
// several.
func declaredVersion(topology string, st *Status) string {
	if topology != "" || st.ControlPlane == nil || len(st.ControlPlane.Versions) != 1 {
		return topology
	}
	return st.ControlPlane.Versions[0].Version
}

func childFromV1beta1(c *clusterv1beta1.Cluster) fleet.Child {
	ch := fleet.Child{
		Name:             c.Name,
		Namespace:        c.Namespace,
		Labels:           c.Labels,
		KubeconfigSecret: KubeconfigSecretName(c.Name),
	}
	st := &Status{Phase: c.Status.Phase}
	if ref := c.Spec.ControlPlaneRef; ref != nil {
		st.refresh = refresherFor(ref.Kind, c.Spec.Paused)
	}
	if c.Spec.InfrastructureRef != nil {
		st.Provider = InfraProvider(c.Spec.InfrastructureRef.Kind)
	}
	if c.Spec.Topology != nil {
		ch.Version = c.Spec.Topology.Version
	}
	if v := c.Status.V1Beta2; v != nil {
		if cond := apimeta.FindStatusCondition(v.Conditions, clusterv1.AvailableCondition); cond != nil {
			st.Available = string(cond.Status)
		}
		if cp := v.ControlPlane; cp != nil {
			st.ControlPlane = replicas(cp.DesiredReplicas, cp.ReadyReplicas, cp.AvailableReplicas, fromV1beta1(cp.Versions))
		}
		if w := v.Workers; w != nil {
			st.Workers = replicas(w.DesiredReplicas, w.ReadyReplicas, w.AvailableReplicas, fromV1beta1(w.Versions))
		}
	}
	ch.Version = declaredVersion(ch.Version, st)
	Record(&ch, st)
	flux.RecordDeclaredBy(&ch, c.Labels)
	return ch
}

// fromV1beta1 converts versions as a v1beta1 Cluster reports them: the same
// fields as v1beta2's.
func fromV1beta1(in []clusterv1beta1.StatusVersion) []clusterv1.StatusVersion {
	out := make([]clusterv1.StatusVersion, 0, len(in))
	for _, v := range in {
		out = append(out, clusterv1.StatusVersion(v))
	}
	return out
}
