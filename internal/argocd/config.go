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

	"k8s.io/apimachinery/pkg/runtime"
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
// config does not have is refused. awsAuthConfig becomes the exec of
// argocd-k8s-auth that Argo CD runs for it, which the policy refuses
// unless the operator allows that plugin. No error quotes a value.
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
	return policy.RESTConfigFor(src, cfg, where(cfg))
}

// The keys of Argo CD's v1alpha1.ClusterConfig and of the types under it,
// as Argo CD 3.5 writes them (pkg/apis/application/v1alpha1/types.go,
// v3.5.1): every key decodes; any other is refused.
var (
	// ClusterConfig.
	configKeys = []string{"username", "password", "bearerToken", "tlsClientConfig", "awsAuthConfig", "execProviderConfig", "disableCompression", "proxyUrl"}
	// TLSClientConfig.
	tlsKeys = []string{"insecure", "serverName", "certData", "keyData", "caData"}
	// AWSAuthConfig.
	awsKeys = []string{"clusterName", "roleARN", "profile"}
	// ExecProviderConfig; provideClusterInfo and config are new in 3.5.
	execKeys = []string{"command", "args", "env", "apiVersion", "installHint", "provideClusterInfo", "config"}
)

// The exec entry Argo CD makes of awsAuthConfig (Cluster.RawRestConfig):
// argocd-k8s-auth aws --cluster-name NAME [--role-arn ARN] [--profile P].
const (
	awsCommand    = "argocd-k8s-auth"
	awsAPIVersion = "client.authentication.k8s.io/v1beta1"
)

// execFrom is the key of the extension of the kubeconfig Kubeconfig makes
// that says which field of the config its exec entry was made of
// (awsAuthConfig or execProviderConfig), for where. A Secret cannot set
// it, and kubeconfig.NamedAfter does not copy it.
const execFrom = "kubectl-fleet.argocd/exec-from"

// Kubeconfig makes the kubeconfig of an Argo CD cluster Secret, as Config
// does, without the policy's checks.
//
// As Argo CD does (Cluster.RawRestConfig), awsAuthConfig, when set, is the
// credential, else execProviderConfig, else username, password and
// bearerToken: the others are decoded, so their keys are checked, and
// then ignored, as Argo CD ignores them. tlsClientConfig, proxyUrl and
// disableCompression apply to every kind.
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
	top := d.object(KeyConfig, raw, configKeys...)
	cluster := &clientcmdapi.Cluster{Server: server}
	user := &clientcmdapi.AuthInfo{}
	// First the credentials, then how to reach the server: the first
	// wrong field named is the first Argo CD's struct has.
	username, password, token := d.str(top, "username"), d.str(top, "password"), d.str(top, "bearerToken")
	// proxyUrl is kept, for the policy to refuse (it changes the route).
	cluster.ProxyURL = d.str(top, "proxyUrl")
	cluster.DisableCompression = d.boolean(top, "disableCompression")
	if tls, ok := d.sub(top, "tlsClientConfig", tlsKeys...); ok {
		// insecure is kept, for the policy to refuse.
		cluster.InsecureSkipTLSVerify = d.boolean(tls, "insecure")
		cluster.TLSServerName = d.str(tls, "serverName")
		cluster.CertificateAuthorityData = d.bytes(tls, "caData")
		user.ClientCertificateData = d.bytes(tls, "certData")
		user.ClientKeyData = d.bytes(tls, "keyData")
	}
	aws, isAWS := d.sub(top, "awsAuthConfig", awsKeys...)
	exec, isExec := d.sub(top, "execProviderConfig", execKeys...)
	var awsExec, execExec *clientcmdapi.ExecConfig
	if isAWS {
		awsExec = d.awsExec(aws)
	}
	if isExec {
		execExec = d.execProvider(exec)
	}
	if d.err != nil {
		return nil, d.err
	}
	cfg := clientcmdapi.NewConfig()
	switch {
	case isAWS:
		user.Exec = awsExec
		cfg.Extensions[execFrom] = &runtime.Unknown{Raw: []byte(`"awsAuthConfig"`), ContentType: runtime.ContentTypeJSON}
	case isExec:
		user.Exec = execExec
		cfg.Extensions[execFrom] = &runtime.Unknown{Raw: []byte(`"execProviderConfig"`), ContentType: runtime.ContentTypeJSON}
	default:
		user.Username, user.Password, user.Token = username, password, token
	}
	cfg.Clusters[entry] = cluster
	cfg.AuthInfos[entry] = user
	cfg.Contexts[entry] = &clientcmdapi.Context{Cluster: entry, AuthInfo: entry}
	cfg.CurrentContext = entry
	return cfg, nil
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

// awsExec is the exec entry Argo CD makes of awsAuthConfig, o: its flags
// in Argo CD's order, each optional one only when set.
func (d *decoder) awsExec(o object) *clientcmdapi.ExecConfig {
	args := []string{"aws", "--cluster-name", d.str(o, "clusterName")}
	if arn := d.str(o, "roleARN"); arn != "" {
		args = append(args, "--role-arn", arn)
	}
	if profile := d.str(o, "profile"); profile != "" {
		args = append(args, "--profile", profile)
	}
	return &clientcmdapi.ExecConfig{Command: awsCommand, Args: args, APIVersion: awsAPIVersion}
}

// execProvider is the exec entry of execProviderConfig, o, its env sorted
// by name.
func (d *decoder) execProvider(o object) *clientcmdapi.ExecConfig {
	exec := &clientcmdapi.ExecConfig{Command: d.str(o, "command"), Args: d.strings(o, "args"),
		APIVersion: d.str(o, "apiVersion"), InstallHint: d.str(o, "installHint"),
		ProvideClusterInfo: d.boolean(o, "provideClusterInfo")}
	env := d.stringMap(o, "env")
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: name, Value: env[name]})
	}
	// config is data for the plugin (ExecCredential.Spec.Cluster.Config,
	// a kubeconfig's cluster extension client.authentication.k8s.io/exec).
	// It is valid JSON, the config having decoded, and harmless; it is
	// ignored, as the policy gives no plugin config data (it clears
	// ExecConfig.Config).
	return exec
}

// where maps the path of a kubeconfig field of cfg, made by Kubeconfig, to
// the path, from the Secret's data, of the field of the config it was made
// of.
func where(cfg *clientcmdapi.Config) func(path string) string {
	execField := "execProviderConfig"
	if u, ok := cfg.Extensions[execFrom].(*runtime.Unknown); ok && string(u.Raw) == `"awsAuthConfig"` {
		execField = "awsAuthConfig"
	}
	return func(path string) string {
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
		case strings.HasPrefix(path, u+"exec") && execField == "awsAuthConfig":
			// Its args are made of awsAuthConfig's fields, not named by it.
			return KeyConfig + ".awsAuthConfig"
		case strings.HasPrefix(path, u+"exec"):
			return KeyConfig + ".execProviderConfig" + strings.TrimPrefix(path, u+"exec")
		}
		return KeyConfig
	}
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

// sub decodes the object at key of o, refusing a key not in known; ok is
// whether it is set (not absent nor null).
func (d *decoder) sub(o object, key string, known ...string) (object, bool) {
	raw, ok := o.fields[key]
	if d.err != nil || !ok || isNull(raw) {
		return object{path: o.path + "." + key}, false
	}
	return d.object(o.path+"."+key, raw, known...), true
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
