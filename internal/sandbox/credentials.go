package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// PluginUser is the user the sandbox's credential plugins log in as: the
// operator, walking as themselves.
const PluginUser = "operator@example.com"

// pluginsDir is the directory, under the fleet's, of its credential
// plugins, named as providers name them.
const pluginsDir = "bin"

// Plugin names of the user kubeconfigs (ClusterSpec.UserKubeconfig).
const (
	PluginAWS       = "aws"
	PluginGKE       = "gke-gcloud-auth-plugin"
	PluginKubelogin = "kubelogin"
)

// PluginDir is the directory of the sandbox's credential plugins: aws,
// gke-gcloud-auth-plugin and kubelogin, each answering for every cluster
// whose user kubeconfig names it an ExecCredential of PluginUser on that
// cluster's apiserver. A test puts it on PATH.
func (f *Fleet) PluginDir() string { return filepath.Join(f.Dir, pluginsDir) }

// PluginMarker is the file the plugin name creates when it runs.
func (f *Fleet) PluginMarker(name string) string {
	return filepath.Join(f.Dir, "ran-"+name)
}

// pluginAnswers are, for each plugin, the ExecCredential it answers for
// each key: its arguments, or (gke-gcloud-auth-plugin, which gets the
// cluster's from KUBERNETES_EXEC_INFO) the server.
type pluginAnswers struct {
	mu      sync.Mutex
	answers map[string]map[string][]byte
}

func (p *pluginAnswers) add(plugin, key string, cred []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answers == nil {
		p.answers = map[string]map[string][]byte{}
	}
	if p.answers[plugin] == nil {
		p.answers[plugin] = map[string][]byte{}
	}
	p.answers[plugin][key] = cred
}

// userExec is the exec of the user kubeconfig of child, whose apiserver
// is s, as its provider writes it, and records what the plugin answers.
func (f *Fleet) userExec(s *server, child *ClusterSpec) (*clientcmdapi.ExecConfig, error) {
	user, err := s.addUser(envtest.User{Name: PluginUser, Groups: []string{"system:masters"}})
	if err != nil {
		return nil, err
	}
	cred, err := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": execStatus(user)})
	if err != nil {
		return nil, err
	}
	// CAPA names the EKS cluster NAMESPACE_NAME unless told otherwise.
	key := child.Namespace + "_" + child.Name
	exec := &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1beta1", InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode}
	switch child.UserKubeconfig {
	case UserKubeconfigCAPA:
		exec.Command, exec.Args = PluginAWS, []string{"eks", "get-token", "--cluster-name", key, "--output", "json"}
	case UserKubeconfigCAPZ:
		// AKS's arguments, as CAPZ copies them; the tenant keys the answer.
		exec.Command, exec.Args = PluginKubelogin, []string{"get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630", "--tenant-id", key}
	case UserKubeconfigCAPG:
		exec.Command, exec.ProvideClusterInfo = PluginGKE, true
		f.plugins.add(PluginGKE, s.url(), cred)
		return exec, nil
	}
	f.plugins.add(exec.Command, strings.Join(exec.Args, " "), cred)
	return exec, nil
}

// writePlugins writes the credential plugins, once every user kubeconfig
// is made. Each touches its marker, then answers for its key, or fails.
func (f *Fleet) writePlugins() error {
	if err := os.MkdirAll(f.PluginDir(), 0o700); err != nil {
		return err
	}
	f.plugins.mu.Lock()
	defer f.plugins.mu.Unlock()
	for _, name := range []string{PluginAWS, PluginGKE, PluginKubelogin} {
		var b strings.Builder
		fmt.Fprintf(&b, "#!/bin/sh\n# A credential plugin of the sandbox, named as %s's real one.\ntouch %q\n", name, f.PluginMarker(name))
		if name == PluginGKE {
			b.WriteString("key=$(printf '%s' \"$KUBERNETES_EXEC_INFO\" | sed -n 's/.*\"server\": *\"\\([^\"]*\\)\".*/\\1/p')\n")
		} else {
			b.WriteString("key=\"$*\"\n")
		}
		b.WriteString("case \"$key\" in\n")
		answers := f.plugins.answers[name]
		keys := make([]string, 0, len(answers))
		for k := range answers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s)\ncat <<'JSON'\n%s\nJSON\n;;\n", shellQuote(k), answers[k])
		}
		fmt.Fprintf(&b, "*)\necho \"%s: no cluster for: $key\" >&2\nexit 1\n;;\nesac\n", name)
		if err := f.writeFile(filepath.Join(pluginsDir, name), []byte(b.String()), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// shellQuote quotes s for a case pattern: literally.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// adminToken mints a token of a new ServiceAccount of the apiserver s,
// bound to cluster-admin: what a cloud's short-lived token is to the
// sandbox. With expired, the ServiceAccount is deleted once the token is
// minted: the apiserver then refuses it, as a token that expired.
func adminToken(ctx context.Context, s *server, name string, expired bool) (string, error) {
	c := s.client
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: name}}}
	for _, obj := range []client.Object{sa, binding} {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("failed to create %s: %w", name, err)
		}
	}
	token, err := requestToken(ctx, c, sa, time.Hour)
	if err != nil {
		return "", err
	}
	if expired {
		if err := c.Delete(ctx, sa); err != nil {
			return "", fmt.Errorf("failed to delete ServiceAccount kube-system/%s: %w", name, err)
		}
	}
	return token, nil
}

// tokenKubeconfig is a kubeconfig of s for child whose user is a token.
func tokenKubeconfig(s *server, child *ClusterSpec, token string) ([]byte, error) {
	return kubeconfigFor(child.Name, &rest.Config{Host: s.url(), TLSClientConfig: rest.TLSClientConfig{CAData: s.config.CAData}}, &clientcmdapi.AuthInfo{Token: token})
}

// privateHost is the host of a private cluster's server.
func privateHost(name string) string { return name + "." + PrivateDomain }

// privateURL is the URL of a private server listening on host:port:
// its private name, the same port.
func privateURL(name, apiserverURL string) string {
	u, err := url.Parse(apiserverURL)
	if err != nil {
		return apiserverURL
	}
	return "https://" + net.JoinHostPort(privateHost(name), u.Port())
}

// isPrivate reports whether host is a private cluster's.
func isPrivate(host string) bool {
	return strings.HasSuffix(strings.TrimSuffix(host, "."), "."+PrivateDomain)
}
