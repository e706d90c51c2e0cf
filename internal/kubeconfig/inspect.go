package kubeconfig

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
)

// Inspection is what an operator should know about a kubeconfig read from a
// Secret before using it themselves (get-kubeconfig): whom it makes them,
// and what it would run or read on their machine.
type Inspection struct {
	// Context is the name of the kubeconfig's current context; Cluster and
	// User are its entries.
	Context string
	Cluster *clientcmdapi.Cluster
	User    *clientcmdapi.AuthInfo
	// Admin is true when the user's client certificate is in the
	// system:masters group: full control of the cluster.
	Admin bool
	// Exec is the exec credential plugin the user runs, if any.
	Exec *clientcmdapi.ExecConfig
	// context is the current context's entry.
	context *clientcmdapi.Context
	// Refused are the fields, other than exec, that the walk policy refuses:
	// local file paths, auth-provider, proxy, insecure TLS, impersonation.
	Refused []*FieldError
	// LeftOut are the refused fields and exec plugins of the entries the
	// current context does not use: other contexts, clusters and users.
	// Only the current context is handed out (Minimal), so they are left
	// out, but the operator is told: kubectl would run another context's
	// exec plugin as soon as --context names it.
	LeftOut []*FieldError
}

// Minimal is a kubeconfig of the current context alone, its cluster and
// its user: what get-kubeconfig hands out.
func (in *Inspection) Minimal() ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.CurrentContext = in.Context
	cfg.Contexts[in.Context] = &clientcmdapi.Context{Cluster: in.context.Cluster, AuthInfo: in.context.AuthInfo, Namespace: in.context.Namespace}
	cfg.Clusters[in.context.Cluster] = in.Cluster
	if in.context.AuthInfo != "" {
		cfg.AuthInfos[in.context.AuthInfo] = in.User
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to write the kubeconfig of context %q: %w", escape.String(in.Context), err)
	}
	return out, nil
}

// Inspect decodes data, a kubeconfig from src, and reports on its current
// context. It fails only when the kubeconfig is unusable; fields the walk
// policy would refuse are reported, not refused.
func Inspect(src Source, data []byte) (*Inspection, error) {
	cfg, err := load(src, data)
	if err != nil {
		return nil, err
	}
	name, kctx, err := currentContext(src, cfg)
	if err != nil {
		return nil, err
	}
	cluster, user, err := entries(src, cfg, name, kctx)
	if err != nil {
		return nil, err
	}
	if err := checkServer(src, kctx.Cluster, cluster); err != nil {
		return nil, err
	}
	in := &Inspection{Context: name, Cluster: cluster, User: user, Exec: user.Exec, Admin: inMasters(user.ClientCertificateData), context: kctx}
	in.Refused = clusterViolations(src, kctx.Cluster, cluster)
	// Exec is reported on its own: a user kubeconfig legitimately runs one.
	_, violations := (Policy{}).userViolations(src, kctx.AuthInfo, user, cluster.Server)
	for _, v := range violations {
		if v.Field != "users["+kctx.AuthInfo+"].exec" {
			in.Refused = append(in.Refused, v)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(cfg.Clusters)) {
		if n != kctx.Cluster && cfg.Clusters[n] != nil {
			in.LeftOut = append(in.LeftOut, clusterViolations(src, n, cfg.Clusters[n])...)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		if n != kctx.AuthInfo && cfg.AuthInfos[n] != nil {
			_, violations := (Policy{}).userViolations(src, n, cfg.AuthInfos[n], "")
			in.LeftOut = append(in.LeftOut, violations...)
		}
	}
	return in, nil
}

// entries returns the cluster and user of a context, checked to exist.
func entries(src Source, cfg *clientcmdapi.Config, ctxName string, kctx *clientcmdapi.Context) (*clientcmdapi.Cluster, *clientcmdapi.AuthInfo, error) {
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok || cluster == nil {
		return nil, nil, &FieldError{Source: src, Field: "contexts[" + ctxName + "].cluster", Reason: "names a cluster that the kubeconfig does not define", kind: ErrInvalid}
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok || user == nil {
		if kctx.AuthInfo != "" {
			return nil, nil, &FieldError{Source: src, Field: "contexts[" + ctxName + "].user", Reason: "names a user that the kubeconfig does not define", kind: ErrInvalid}
		}
		user = clientcmdapi.NewAuthInfo()
	}
	return cluster, user, nil
}

// inMasters reports whether a PEM client certificate is in system:masters.
func inMasters(certPEM []byte) bool {
	for rest := certPEM; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return false
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err == nil && slices.Contains(cert.Subject.Organization, "system:masters") {
			return true
		}
	}
}

// NamedAfter writes cfg, a kubeconfig made of what src holds, with its
// cluster, user and context named name, its current context: what a
// kubeconfig built from an inventory's object (an Argo CD cluster Secret,
// an OCM ManagedCluster) looks like when it is handed out.
func NamedAfter(name string, src Source, cfg *clientcmdapi.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	for _, c := range cfg.Contexts {
		kc.Clusters[name] = cfg.Clusters[c.Cluster]
		kc.AuthInfos[name] = cfg.AuthInfos[c.AuthInfo]
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("failed to write the kubeconfig of %s: %w", src, err)
	}
	return data, nil
}
