package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Edges a parent may reach a child by (ClusterSpec.Edges).
const (
	EdgeCAPI   = "capi"
	EdgeArgoCD = "argocd"
)

// Faults only an Argo CD cluster Secret's config has, and two that a
// kubeconfig has too.
const (
	KubeconfigAWSAuth  = "awsauth"
	KubeconfigInsecure = "insecure"
	KubeconfigProxy    = "proxy"
)

// ArgoCDNamespace holds the Argo CD cluster Secrets the sandbox writes.
const ArgoCDNamespace = "argocd"

// An Argo CD cluster Secret, as Argo CD v3.2.6 writes it, in its own words
// (github.com/argoproj/argo-cd/v3, read in the module cache).
const (
	// argoCDSecretTypeLabel marks a Secret of Argo CD's, argoCDSecretTypeCluster
	// a cluster's: common/common.go, LabelKeySecretType and
	// LabelValueSecretTypeCluster.
	argoCDSecretTypeLabel   = "argocd.argoproj.io/secret-type"
	argoCDSecretTypeCluster = "cluster"
	// The keys of a cluster Secret: util/db/cluster.go, clusterToSecret
	// (data["name"], data["server"], data["config"]); the config is a
	// v1alpha1.ClusterConfig, pkg/apis/application/v1alpha1/types.go.
	argoCDKeyName   = "name"
	argoCDKeyServer = "server"
	argoCDKeyConfig = "config"
	// argoCDInClusterServer is the server of the cluster Argo CD runs on:
	// pkg/apis/application/v1alpha1/application_defaults.go,
	// KubernetesInternalAPIServerAddr.
	argoCDInClusterServer = "https://kubernetes.default.svc"
)

// hasEdge reports whether the parent reaches c by edge.
func (c *ClusterSpec) hasEdge(edge string) bool {
	if len(c.Edges) == 0 {
		return edge == EdgeCAPI
	}
	return slices.Contains(c.Edges, edge)
}

// argoCDKubeconfig is the kubeconfig an Argo CD cluster Secret for child is
// made of: for a valid one, a system:masters user of its own.
func (f *Fleet) argoCDKubeconfig(parent *server, child *ClusterSpec) ([]byte, error) {
	switch child.Kubeconfig {
	case KubeconfigValid:
		cfg, err := f.childServer(parent, child).addUser(envtest.User{Name: child.Name + "-argocd", Groups: []string{"system:masters"}})
		if err != nil {
			return nil, fmt.Errorf("failed to add the Argo CD user: %w", err)
		}
		return kubeconfigFor(child.Name, cfg, nil)
	case KubeconfigAWSAuth, KubeconfigInsecure, KubeconfigProxy, KubeconfigExec, KubeconfigTokenFile:
		// A server of its own, where nothing listens: each fault is a
		// cluster of its own, not merged with another by endpoint.
		port, err := f.closedPort()
		if err != nil {
			return nil, err
		}
		cfg := rest.CopyConfig(f.Members[""].Config)
		cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
		var user *clientcmdapi.AuthInfo
		switch child.Kubeconfig {
		case KubeconfigExec:
			user = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: f.ExecPluginPath()}}
		case KubeconfigTokenFile:
			user = &clientcmdapi.AuthInfo{TokenFile: f.TokenFilePath()}
		}
		return kubeconfigFor(child.Name, cfg, user)
	}
	return f.faultKubeconfig(parent, child)
}

// createArgoCDSecret puts on the parent c the Argo CD cluster Secret
// cluster-<name> in namespace argocd: the child's server, and a config
// (argo-cd's v1alpha1.ClusterConfig) made of value, a kubeconfig, with
// the child's fault.
func createArgoCDSecret(ctx context.Context, c client.Client, child *ClusterSpec, value []byte) error {
	server, config, err := argoCDConfig(child, value)
	if err != nil {
		return err
	}
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ArgoCDNamespace, Name: "cluster-" + child.Name,
			Labels: map[string]string{argoCDSecretTypeLabel: argoCDSecretTypeCluster}},
		Data: map[string][]byte{argoCDKeyName: []byte(child.Name), argoCDKeyServer: []byte(server), argoCDKeyConfig: config},
	}
	return create(ctx, c, obj, nil)
}

// argoCDConfig is the server and config of an Argo CD cluster Secret made
// of a kubeconfig, as `argocd cluster add` writes them, with child's fault.
// The config's field names are v1alpha1.ClusterConfig's JSON names
// (pkg/apis/application/v1alpha1/types.go: tlsClientConfig with insecure,
// caData, certData, keyData; bearerToken; execProviderConfig with command,
// apiVersion, provideClusterInfo; awsAuthConfig with clusterName, roleARN;
// proxyUrl).
func argoCDConfig(child *ClusterSpec, value []byte) (string, []byte, error) {
	if child.Kubeconfig == KubeconfigGarbage {
		return "https://127.0.0.1:1", []byte("{this is not: json\x00"), nil
	}
	kc, err := clientcmd.Load(value)
	if err != nil {
		return "", nil, fmt.Errorf("failed to read the kubeconfig of %s: %w", child.Name, err)
	}
	kctx := kc.Contexts[kc.CurrentContext]
	cluster, user := kc.Clusters[kctx.Cluster], kc.AuthInfos[kctx.AuthInfo]
	b64 := base64.StdEncoding.EncodeToString
	tls := map[string]any{"insecure": child.Kubeconfig == KubeconfigInsecure}
	if len(cluster.CertificateAuthorityData) > 0 {
		tls["caData"] = b64(cluster.CertificateAuthorityData)
	}
	if len(user.ClientCertificateData) > 0 {
		tls["certData"], tls["keyData"] = b64(user.ClientCertificateData), b64(user.ClientKeyData)
	}
	config := map[string]any{"tlsClientConfig": tls}
	if user.Token != "" {
		config["bearerToken"] = user.Token
	}
	if user.TokenFile != "" {
		config["tokenFile"] = user.TokenFile // no field of Argo CD's: refused
	}
	if user.Exec != nil {
		// As Argo CD 3.5 writes it for a plugin that needs the cluster's
		// server and CA (gke-gcloud-auth-plugin): provideClusterInfo.
		config["execProviderConfig"] = map[string]any{"command": user.Exec.Command, "apiVersion": user.Exec.APIVersion, "provideClusterInfo": true}
	}
	switch child.Kubeconfig {
	case KubeconfigAWSAuth:
		config["awsAuthConfig"] = map[string]any{"clusterName": child.Name, "roleARN": "arn:aws:iam::123456789012:role/argocd"}
	case KubeconfigProxy:
		config["proxyUrl"] = "http://127.0.0.1:3128"
	}
	data, err := json.Marshal(config)
	// Without the trailing slash of an apiserver's URL, as Argo CD writes
	// a server (its db trims it): the application-controller finds an
	// Application's destination by the server as the Application names
	// it, among the cluster Secrets' trimmed servers.
	return strings.TrimRight(cluster.Server, "/"), data, err
}
