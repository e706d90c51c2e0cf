package kube

import (
	"fmt"
	"net/http"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig is a kubeconfig of one context, name, that reaches the
// connection's cluster as the connection does: server, CA and TLS server
// name, the proxy (a route's), client certificate and key, token or basic
// auth, and the exec plugin the policy allowed, if any. It is built from the connection's
// own config, which for a cluster reached through a Secret holds only what
// the kubeconfig policy let through: nothing that reads a file or runs an
// unlisted command.
func (c *Conn) Kubeconfig(name string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   c.cfg.Host,
		CertificateAuthorityData: c.cfg.CAData,
		TLSServerName:            c.cfg.ServerName,
		ProxyURL:                 c.proxyURL(),
	}
	user := &clientcmdapi.AuthInfo{
		ClientCertificateData: c.cfg.CertData,
		ClientKeyData:         c.cfg.KeyData,
		Token:                 c.cfg.BearerToken,
		Username:              c.cfg.Username,
		Password:              c.cfg.Password,
	}
	if c.cfg.ExecProvider != nil {
		exec := *c.cfg.ExecProvider
		exec.InteractiveMode = clientcmdapi.NeverExecInteractiveMode
		user.Exec = &exec
	}
	cfg.AuthInfos[name] = user
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to write a kubeconfig for %s: %w", RedactURL(c.cfg.Host), err)
	}
	return out, nil
}

// proxyURL is the proxy the connection reaches its server through, "" for
// none.
func (c *Conn) proxyURL() string {
	if c.cfg.Proxy == nil {
		return ""
	}
	req, err := http.NewRequest(http.MethodGet, c.cfg.Host, http.NoBody)
	if err != nil {
		return ""
	}
	u, err := c.cfg.Proxy(req)
	if err != nil || u == nil {
		return ""
	}
	return u.String()
}
