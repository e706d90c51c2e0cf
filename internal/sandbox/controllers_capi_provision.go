package sandbox

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// provisionCAPI gives CAPI what it needs to write the kubeconfig of child,
// whose apiserver is the sandbox's: the Secret <name>-ca with the CA the
// apiserver trusts (as kubeadm's CA), then a Cluster object with the
// apiserver's endpoint and neither an infrastructure nor a control plane
// reference, of which CAPI's core controller writes the kubeconfig Secret
// and the status itself.
func (f *Fleet) provisionCAPI(ctx context.Context, parent *server, child *ClusterSpec) error {
	srv := f.childServer(parent, child)
	ca := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: child.Namespace, Name: child.Name + "-ca",
			Labels: map[string]string{clusterv1.ClusterNameLabel: child.Name},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{corev1.TLSCertKey: srv.ca.certPEM, corev1.TLSPrivateKeyKey: srv.ca.keyPEM},
	}
	if err := create(ctx, parent.client, ca, nil); err != nil {
		return err
	}
	u, err := url.Parse(srv.url())
	if err != nil {
		return fmt.Errorf("failed to parse the apiserver URL: %w", err)
	}
	port, err := strconv.ParseInt(u.Port(), 10, 32)
	if err != nil {
		return fmt.Errorf("failed to parse the apiserver port: %w", err)
	}
	infra := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevCluster",
		"metadata": map[string]any{
			"namespace": child.Namespace, "name": child.Name,
			"annotations": map[string]any{clusterv1.ManagedByAnnotation: externalManager},
		},
		"spec": map[string]any{"controlPlaneEndpoint": map[string]any{"host": u.Hostname(), "port": port}},
	}}
	err = create(ctx, parent.client, infra, func() {
		_ = unstructured.SetNestedField(infra.Object, true, "status", "initialization", "provisioned")
	})
	if err != nil {
		return err
	}
	obj, err := clusterMeta(child)
	if err != nil {
		return err
	}
	obj.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DevCluster", Name: child.Name}
	return create(ctx, parent.client, obj, nil)
}

// provisionInMemory declares child as a platform engineer would for CAPD's
// in-memory backend, and leaves it to CAPI.
func provisionInMemory(ctx context.Context, c client.Client, child *ClusterSpec) error {
	owner, err := ownerLabels(child.DeclaredBy)
	if err != nil {
		return err
	}
	for _, obj := range inMemoryClusterObjects(child.Namespace, child.Name, child.Version, child.Machines) {
		if _, ok := obj.(*clusterv1.Cluster); ok {
			labels := obj.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			maps.Copy(labels, child.Labels)
			maps.Copy(labels, owner)
			obj.SetLabels(labels)
		}
		if err := create(ctx, c, obj, nil); err != nil {
			return fmt.Errorf("%T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// clusterMeta is the Cluster object of s with its labels and no spec.
func clusterMeta(s *ClusterSpec) (*clusterv1.Cluster, error) {
	owner, err := ownerLabels(s.DeclaredBy)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	maps.Copy(labels, s.Labels)
	maps.Copy(labels, owner)
	// A tenant its parent's HelmRelease declares (helmRelease) is labelled
	// as helm-controller leaves what it installs.
	helmLabels, annotations := helmReleaseOwner(s)
	maps.Copy(labels, helmLabels)
	return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: labels, Annotations: annotations}}, nil
}

// externalManager is the value of cluster.x-k8s.io/managed-by on the
// infrastructure the sandbox provides for CAPI (provision: capi).
const externalManager = "fleet-sandbox"

// provisionTimeout bounds how long the sandbox waits for CAPI to provision
// the clusters its spec declares.
const provisionTimeout = 5 * time.Minute

// waitProvisioned waits until CAPI has provisioned every child of s that the
// spec gives it: its Cluster Available (inmemory) or reached by CAPI (capi),
// its kubeconfig Secret written.
func waitProvisioned(ctx context.Context, s *server) error {
	ctx, cancel := context.WithTimeout(ctx, provisionTimeout)
	defer cancel()
	for i := range s.spec.Clusters {
		child := &s.spec.Clusters[i]
		if child.Provision == "" {
			continue
		}
		var last string
		err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			c := &clusterv1.Cluster{}
			if err := s.client.Get(ctx, client.ObjectKey{Namespace: child.Namespace, Name: child.Name}, c); err != nil {
				return false, err
			}
			// A cluster CAPI provisions in memory comes up whole; one
			// with the sandbox's apiserver has no control plane CAPI
			// knows of, and is never Available: CAPI reached it.
			want := clusterv1.AvailableCondition
			if child.Provision == ProvisionCAPI {
				want = clusterv1.ClusterRemoteConnectionProbeCondition
			}
			cond := apimeta.FindStatusCondition(c.Status.Conditions, want)
			if cond == nil || cond.Status != metav1.ConditionTrue {
				last = "phase " + c.Status.Phase
				if cond != nil {
					last += ", " + want + " " + string(cond.Status) + ": " + cond.Message
				}
				return false, nil
			}
			err := s.client.Get(ctx, client.ObjectKey{Namespace: child.Namespace, Name: child.Name + "-kubeconfig"}, &corev1.Secret{})
			if apierrors.IsNotFound(err) {
				last = "no kubeconfig Secret yet"
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			return fmt.Errorf("CAPI did not provision cluster %s/%s within %s (%s): %w", child.Namespace, child.Name, provisionTimeout, last, err)
		}
	}
	return nil
}
