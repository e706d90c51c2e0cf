// Package argocd reads what Argo CD keeps on a cluster: the cluster Secrets
// by which it reaches other clusters (an edge source of package reach).
package argocd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// An Argo CD cluster Secret: its label, and its data keys.
const (
	SecretTypeLabel   = "argocd.argoproj.io/secret-type"
	SecretTypeCluster = "cluster"
	KeyName           = "name"
	KeyServer         = "server"
	KeyConfig         = "config"
	KeyProject        = "project"
	KeyNamespaces     = "namespaces"
	// InClusterServer is the server of the cluster Argo CD runs on: the
	// holder itself, not a child.
	InClusterServer = "https://kubernetes.default.svc"
)

// entry names the cluster, user and context of the kubeconfig Config makes.
const entry = "argocd"

// Config is the client configuration of an Argo CD cluster Secret, src
// (its Key empty: errors name fields by their path from the Secret's
// data), whose data is data: its server and config (argo-cd's
// v1alpha1.ClusterConfig, JSON) made into a kubeconfig in memory and
// checked by policy as any kubeconfig is. Before that, a key Argo CD's
// config does not have is refused, as is awsAuthConfig (Argo CD runs
// argocd-k8s-auth for it, a command). No error quotes a value.
func Config(policy kubeconfig.Policy, src kubeconfig.Source, data map[string][]byte) (*rest.Config, error) {
	cfg, err := Kubeconfig(src, data)
	if err != nil {
		return nil, err
	}
	return Check(policy, src, cfg)
}

// Check checks cfg, the kubeconfig Kubeconfig made of the Secret src, with
// policy, naming a refused field by its path in the Secret.
func Check(policy kubeconfig.Policy, src kubeconfig.Source, cfg *clientcmdapi.Config) (*rest.Config, error) {
	return policy.RESTConfigFor(src, cfg, where)
}

// Kubeconfig makes the kubeconfig of an Argo CD cluster Secret, as Config
// does, without the policy's checks.
func Kubeconfig(src kubeconfig.Source, data map[string][]byte) (*clientcmdapi.Config, error) {
	server := string(data[KeyServer])
	if server == "" {
		return nil, kubeconfig.Invalid(src, "data."+KeyServer, "is empty or missing")
	}
	raw := data[KeyConfig]
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, kubeconfig.Invalid(src, "data."+KeyConfig, "is empty or missing")
	}
	d := decoder{src: src}
	top := d.object(KeyConfig, raw, "bearerToken", "username", "password", "tlsClientConfig", "awsAuthConfig", "execProviderConfig", "proxyUrl", "disableCompression")
	if d.err != nil {
		return nil, d.err
	}
	if v, ok := top.fields["awsAuthConfig"]; ok && !isNull(v) {
		return nil, kubeconfig.Refused(src, KeyConfig+".awsAuthConfig", "is AWS IAM authentication, for which Argo CD runs a command (argocd-k8s-auth); running a command named by a Secret is refused")
	}
	cluster := &clientcmdapi.Cluster{Server: server}
	user := &clientcmdapi.AuthInfo{}
	user.Token = d.str(top, "bearerToken")
	user.Username = d.str(top, "username")
	user.Password = d.str(top, "password")
	cluster.ProxyURL = d.str(top, "proxyUrl")
	cluster.DisableCompression = d.boolean(top, "disableCompression")
	if raw, ok := top.fields["tlsClientConfig"]; ok && !isNull(raw) {
		tls := d.object(KeyConfig+".tlsClientConfig", raw, "insecure", "serverName", "caData", "certData", "keyData")
		cluster.InsecureSkipTLSVerify = d.boolean(tls, "insecure")
		cluster.TLSServerName = d.str(tls, "serverName")
		cluster.CertificateAuthorityData = d.bytes(tls, "caData")
		user.ClientCertificateData = d.bytes(tls, "certData")
		user.ClientKeyData = d.bytes(tls, "keyData")
	}
	if raw, ok := top.fields["execProviderConfig"]; ok && !isNull(raw) {
		exec := d.object(KeyConfig+".execProviderConfig", raw, "command", "args", "env", "apiVersion", "installHint")
		user.Exec = &clientcmdapi.ExecConfig{Command: d.str(exec, "command"), Args: d.strings(exec, "args"),
			APIVersion: d.str(exec, "apiVersion"), InstallHint: d.str(exec, "installHint")}
		env := d.stringMap(exec, "env")
		names := make([]string, 0, len(env))
		for name := range env {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			user.Exec.Env = append(user.Exec.Env, clientcmdapi.ExecEnvVar{Name: name, Value: env[name]})
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[entry] = cluster
	cfg.AuthInfos[entry] = user
	cfg.Contexts[entry] = &clientcmdapi.Context{Cluster: entry, AuthInfo: entry}
	cfg.CurrentContext = entry
	return cfg, nil
}

// where is the path, from the Secret's data, of the field of the config
// that the kubeconfig field at path was made of.
func where(path string) string {
	c, u := "clusters["+entry+"].", "users["+entry+"]."
	switch {
	case path == c+"server":
		return "data." + KeyServer
	case path == c+"insecure-skip-tls-verify":
		return KeyConfig + ".tlsClientConfig.insecure"
	case path == c+"proxy-url":
		return KeyConfig + ".proxyUrl"
	case path == c+"certificate-authority-data":
		return KeyConfig + ".tlsClientConfig.caData"
	case strings.HasPrefix(path, u+"exec"):
		return KeyConfig + ".execProviderConfig" + strings.TrimPrefix(path, u+"exec")
	}
	return KeyConfig
}

// decoder reads the fields of a JSON config, keeping the first error; its
// errors name the field's path, never its value.
type decoder struct {
	src kubeconfig.Source
	err error
}

// object is a JSON object of the config and its path.
type object struct {
	path   string
	fields map[string]json.RawMessage
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func (d *decoder) fail(path, reason string, refused bool) {
	if d.err != nil {
		return
	}
	if refused {
		d.err = kubeconfig.Refused(d.src, path, reason)
		return
	}
	d.err = kubeconfig.Invalid(d.src, path, reason)
}

// object decodes raw, the object at path, and refuses a key not in known.
func (d *decoder) object(path string, raw json.RawMessage, known ...string) object {
	o := object{path: path}
	if d.err != nil {
		return o
	}
	if err := json.Unmarshal(raw, &o.fields); err != nil || o.fields == nil {
		d.fail(path, "is not a JSON object", false)
		return o
	}
	keys := make([]string, 0, len(o.fields))
	for k := range o.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			d.fail(path+"."+k, "is not a field of Argo CD's cluster config that kubectl fleet knows: refused rather than ignored", true)
		}
	}
	return o
}

// field decodes the key of o into v, a pointer; what names v's type in errors.
func (d *decoder) field(o object, key, what string, v any) {
	raw, ok := o.fields[key]
	if d.err != nil || !ok || isNull(raw) {
		return
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.fail(o.path+"."+key, "is not "+what, false)
	}
}

func (d *decoder) str(o object, key string) string {
	var s string
	d.field(o, key, "a string", &s)
	return s
}

func (d *decoder) boolean(o object, key string) bool {
	var b bool
	d.field(o, key, "true or false", &b)
	return b
}

func (d *decoder) strings(o object, key string) []string {
	var s []string
	d.field(o, key, "a list of strings", &s)
	return s
}

func (d *decoder) stringMap(o object, key string) map[string]string {
	var m map[string]string
	d.field(o, key, "an object of strings", &m)
	return m
}

// bytes decodes base64 data, as Argo CD writes []byte fields.
func (d *decoder) bytes(o object, key string) []byte {
	s := d.str(o, key)
	if s == "" || d.err != nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		d.fail(o.path+"."+key, "is not base64 data", false)
	}
	return b
}
