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

// role is a ClusterRole or a Role as YAML shows it: no empty metadata.
type role struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   roleMeta            `json:"metadata"`
	Rules      []rbacv1.PolicyRule `json:"rules"`
}

type roleMeta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels"`
}

// roleYAML is a role as YAML, after a comment of its own.
func roleYAML(kind, name, namespace, comment string, rules []rbacv1.PolicyRule) ([]byte, error) {
	data, err := yaml.Marshal(role{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: kind,
		Metadata: roleMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/name": "kubectl-fleet"}}, Rules: rules})
	if err != nil {
		return nil, fmt.Errorf("failed to write %s %s: %w", kind, name, err)
	}
	return append([]byte(comment), data...), nil
}

// ClusterRoles are the roles of the set's access (provider.Set's
// Access): the read commands' ClusterRole, and the operations' ClusterRole
// with a Role in each namespace whose objects alone they write. check
// asks a cluster for every verb they grant.
func ClusterRoles(set provider.Set) ([]Role, error) {
	a := set.Access()
	reader, err := roleYAML("ClusterRole", ReaderRole, "", readerAbout, a.Read)
	if err != nil {
		return nil, err
	}
	operator, err := roleYAML("ClusterRole", OperatorRole, "", operatorAbout, a.Operate)
	if err != nil {
		return nil, err
	}
	for _, in := range a.OperateIn {
		comment := fmt.Sprintf("---\n# In namespace %s alone: %s.\n# Change the namespace to where your installation keeps them, and bind\n# it there with a RoleBinding.\n", in.Namespace, in.Why)
		data, err := roleYAML("Role", OperatorRole, in.Namespace, comment, in.Rules)
		if err != nil {
			return nil, err
		}
		operator = append(operator, data...)
	}
	return []Role{{File: ReaderFile, Data: reader}, {File: OperatorFile, Data: operator}}, nil
}

const readerAbout = `# kubectl-fleet-reader: what kubectl fleet's read commands need on a
# cluster (tree, list, describe, drift, watch, get-kubeconfig, freezes,
# check, ui, mcp). Bind it on the cluster your context points at (the
# MoM), and on every cluster you reach as yourself (--credentials user,
# or a route's context). It writes nothing.
#
# It reads Secrets in every namespace: that is where CAPI, Argo CD and OCM
# keep the kubeconfigs of the clusters below.
#
# diff compares each object git declares, of any kind, with its live copy,
# and mcp's fleet_get reads the kind it is asked for: bind Kubernetes'
# view ClusterRole as well for those (docs/access.md).
#
# Generated from the code by make docs (docs/access.md); kubectl fleet
# check asks for every verb below.
`

const operatorAbout = `# kubectl-fleet-operator: what suspend, resume, reconcile, freeze and
# thaw write, beside kubectl-fleet-reader: a merge patch of Flux objects
# and Argo CD Applications, and, with the Role below, of Argo CD's
# cluster Secrets (freeze --clusters). Bind it with the reader role where
# you operate.
#
# Generated from the code by make docs (docs/access.md).
`
