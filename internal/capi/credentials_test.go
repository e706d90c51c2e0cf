package capi

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// secretOf is a Secret holding a kubeconfig for server whose user is user
// (YAML flow mapping).
func secretOf(name, server, user string) *corev1.Secret {
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: c\n" +
		"clusters: [{name: c, cluster: {server: '" + server + "'}}]\n" +
		"users: [{name: u, user: " + user + "}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\n"
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenants", Name: name},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{KubeconfigKey: []byte(kc)},
	}
}

const (
	tokenUser = "{token: s3cr3t}"
	awsUser   = "{exec: {command: aws, args: [eks, get-token], apiVersion: client.authentication.k8s.io/v1beta1}}"
)

// parentFor is a parent holding objs, whose connector walks with creds and
// allows the plugin aws (found at /usr/local/bin/aws).
func parentFor(t *testing.T, creds kubeconfig.Credentials, objs ...client.Object) *reach.Cluster {
	t.Helper()
	c := testCluster(t, interceptor.Funcs{}, objs...)
	policy := kubeconfig.Policy{Credentials: creds, Plugins: kubeconfig.Plugins{
		Allowed:  []kubeconfig.Allowed{{Command: "aws", From: "--allow-exec"}},
		LookPath: func(string) (string, error) { return "/usr/local/bin/aws", nil },
	}}
	connector := &reach.Connector{Policy: policy, Sources: []reach.Source{Source{}},
		Kube: kube.NewConnector(testScheme(t), append(kube.CoreAPIs(), APIs()...), kube.Options{})}
	return reach.NewCluster(connector, c.Kube())
}

func TestCredentialsChooseTheKubeconfig(t *testing.T) {
	admin := secretOf("team-a-kubeconfig", "https://admin.example", tokenUser)
	capa := secretOf("team-a-user-kubeconfig", "https://user.example", awsUser)
	capz := secretOf("team-a-kubeconfig-user", "https://user.example", awsUser)
	execAdmin := secretOf("team-a-kubeconfig", "https://admin.example", awsUser)
	user, both := kubeconfig.Credentials{User: true}, kubeconfig.Credentials{User: true, Admin: true}
	tests := []struct {
		name    string
		creds   kubeconfig.Credentials
		secrets []client.Object
		// wantHost and wantCredential, or wantErr.
		wantHost, wantCredential, wantErr string
	}{
		{"admin by default, even beside a user kubeconfig", kubeconfig.Credentials{}, []client.Object{admin, capa}, "https://admin.example", "token", ""},
		{"user: CAPA's user kubeconfig", user, []client.Object{admin, capa}, "https://user.example", "user", ""},
		{"user: CAPZ's user kubeconfig", user, []client.Object{admin, capz}, "https://user.example", "user", ""},
		{"user: none, and the admin kubeconfig holds the cluster's own credentials", user, []client.Object{admin}, "", "", "has no user kubeconfig (secret tenants/team-a-user-kubeconfig or tenants/team-a-kubeconfig-user), and its secret tenants/team-a-kubeconfig holds the cluster's own credentials: walk with --credentials user,admin to use them"},
		{"user,admin: none, so the admin one", both, []client.Object{admin}, "https://admin.example", "token", ""},
		{"user: the admin kubeconfig logs in with a plugin alone", user, []client.Object{execAdmin}, "https://admin.example", "user", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, connect := range []bool{true, false} { // read ahead, or each by name
				parent := parentFor(t, tt.creds, append([]client.Object{v1beta2Cluster()}, tt.secrets...)...)
				children, err := parent.Children(context.Background(), connect)
				if err != nil {
					t.Fatal(err)
				}
				child, err := parent.Connect(context.Background(), children[0])
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if child.Kube().Host() != tt.wantHost || child.Credential() != tt.wantCredential {
					t.Errorf("reached %s by %q; want %s by %q", child.Kube().Host(), child.Credential(), tt.wantHost, tt.wantCredential)
				}
			}
		})
	}
}

func TestExpiredProviderTokenSaysWhoRefreshesIt(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for _, paused := range []bool{false, true} {
		cluster := v1beta2Cluster()
		cluster.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "AWSManagedControlPlane", Name: "team-a"}
		cluster.Spec.Paused = &paused
		secret := secretOf("team-a-kubeconfig", srv.URL, tokenUser)
		kc := strings.Replace(string(secret.Data[KubeconfigKey]), "server: '"+srv.URL+"'", "server: '"+srv.URL+"', certificate-authority-data: "+b64(ca), 1)
		secret.Data[KubeconfigKey] = []byte(kc)
		parent := parentFor(t, kubeconfig.Credentials{}, cluster, secret)
		children, err := parent.Children(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		child, err := parent.Connect(context.Background(), children[0])
		if err != nil {
			t.Fatal(err)
		}
		_, err = child.ServerVersion(context.Background())
		var expired *ExpiredTokenError
		if !errors.As(err, &expired) || !strings.Contains(err.Error(), "the server refused the token in secret tenants/team-a-kubeconfig (401 Unauthorized): it has most likely expired; CAPA refreshes it every reconcile of the AWSManagedControlPlane") || strings.Contains(err.Error(), "s3cr3t") {
			t.Fatalf("paused %v: err = %v; want an expired token, who refreshes it, and no token", paused, err)
		}
		if got := strings.Contains(err.Error(), "the Cluster is paused (spec.paused)"); got != paused {
			t.Errorf("paused %v: err = %v; want the paused state said", paused, err)
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
