package check

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// Role is a ClusterRole of docs/rbac, as a file users apply.
type Role struct {
	// File is its path in the repository; Data the file.
	File string
	Data []byte
}

// clusterRole is a ClusterRole as YAML shows it: no empty metadata.
type clusterRole struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   roleMeta            `json:"metadata"`
	Rules      []rbacv1.PolicyRule `json:"rules"`
}

type roleMeta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

// ClusterRoles are the ClusterRoles of the set's access (provider.Set's
// Access): the read commands' and the operations'. check asks a cluster
// for every verb they grant.
func ClusterRoles(set provider.Set) ([]Role, error) {
	a := set.Access()
	roles := []struct {
		name, file, about string
		rules             []rbacv1.PolicyRule
	}{
		{ReaderRole, ReaderFile, readerAbout, a.Read},
		{OperatorRole, OperatorFile, operatorAbout, a.Operate},
	}
	out := make([]Role, 0, len(roles))
	for _, r := range roles {
		data, err := yaml.Marshal(clusterRole{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole",
			Metadata: roleMeta{Name: r.name, Labels: map[string]string{"app.kubernetes.io/name": "kubectl-fleet"}}, Rules: r.rules})
		if err != nil {
			return nil, fmt.Errorf("failed to write ClusterRole %s: %w", r.name, err)
		}
		out = append(out, Role{File: r.file, Data: append([]byte(r.about), data...)})
	}
	return out, nil
}

const readerAbout = `# kubectl-fleet-reader: what kubectl fleet's read commands need on a
# cluster (tree, list, describe, drift, diff of Kustomizations, watch,
# get-kubeconfig, freezes, ui, mcp). Bind it on the cluster your context
# points at (the MoM), and on every cluster you reach as yourself
# (--credentials user, or a route's context). It writes nothing.
#
# It reads Secrets in every namespace: that is where CAPI, Argo CD and OCM
# keep the kubeconfigs of the clusters below. The last rule, get of every
# kind, is diff's: it compares each object git declares with its live copy.
# Argo CD's diff also asks each destination for a server-side dry run,
# which RBAC counts as a patch; this role does not grant it.
#
# Generated from the code by make docs (docs/access.md); kubectl fleet
# check asks for every verb below.
`

const operatorAbout = `# kubectl-fleet-operator: what suspend, resume, reconcile, freeze and
# thaw write, beside kubectl-fleet-reader: a merge patch of Flux objects,
# Argo CD Applications and Argo CD cluster Secrets (freeze --clusters).
# Bind it with the reader role where you operate.
#
# Generated from the code by make docs (docs/access.md).
`
