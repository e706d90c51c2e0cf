package sandbox

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigFor writes a kubeconfig with one context named name that reaches
// cfg's server as cfg's user, with everything inline, as CAPI writes them.
func kubeconfigFor(name string, cfg *rest.Config, user *clientcmdapi.AuthInfo) ([]byte, error) {
	if user == nil {
		user = &clientcmdapi.AuthInfo{
			ClientCertificateData: cfg.CertData,
			ClientKeyData:         cfg.KeyData,
			Token:                 cfg.BearerToken,
		}
	}
	userName := name + "-admin"
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{name: {Server: cfg.Host, CertificateAuthorityData: cfg.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{userName: user},
		Contexts:       map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: userName}},
		CurrentContext: name,
	}
	data, err := clientcmd.Write(kc)
	if err != nil {
		return nil, fmt.Errorf("failed to write kubeconfig for %s: %w", name, err)
	}
	return data, nil
}
