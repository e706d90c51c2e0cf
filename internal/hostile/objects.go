package hostile

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Object is a Kubernetes object as a Server serves it: raw, so that a test
// can give any field any type.
type Object = map[string]any

// Kind is a kind of Object a Server serves: its apiVersion, kind and
// resource, and whether it lives in a namespace.
type Kind struct {
	APIVersion, Kind, Resource string
	Namespaced                 bool
}

// Kinds are the kinds of Objects a Server serves: what the argocd, ocm,
// clusterprofile, sveltos and hypershift edges and the Argo CD probe read.
func Kinds() []Kind {
	return []Kind{
		{APIVersion: "v1", Kind: "Secret", Resource: "secrets", Namespaced: true},
		{APIVersion: "cluster.open-cluster-management.io/v1", Kind: "ManagedCluster", Resource: "managedclusters"},
		{APIVersion: "authentication.open-cluster-management.io/v1beta1", Kind: "ManagedServiceAccount", Resource: "managedserviceaccounts", Namespaced: true},
		{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Resource: "applications", Namespaced: true},
		{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ClusterProfile", Resource: "clusterprofiles", Namespaced: true},
		{APIVersion: "lib.projectsveltos.io/v1beta1", Kind: "SveltosCluster", Resource: "sveltosclusters", Namespaced: true},
		{APIVersion: "hypershift.openshift.io/v1beta1", Kind: "HostedCluster", Resource: "hostedclusters", Namespaced: true},
	}
}

// Labels, keys and names Argo CD and OCM's managed-serviceaccount addon
// write, as the objects below carry them, spelt as upstream does:
// ArgoCDSecretTypeLabel is github.com/argoproj/argo-cd/v3
// common/common.go's LabelKeySecretType (its cluster Secret's keys name,
// server and config, util/db/cluster.go's clusterToSecret);
// ManagedServiceAccountLabel is open-cluster-management-io/managed-serviceaccount
// pkg/common/constants.go's LabelKeyIsManagedServiceAccount.
const (
	ArgoCDNamespace            = "argocd"
	ArgoCDSecretTypeLabel      = "argocd.argoproj.io/secret-type"
	ManagedServiceAccountLabel = "authentication.open-cluster-management.io/is-managed-serviceaccount"
	// ServiceAccount is the name of the ManagedServiceAccount (and of its
	// token Secret) that OCMObjects make: kubectl fleet's default.
	ServiceAccount = "kubectl-fleet"
)

// ArgoCDSecret is the Argo CD cluster Secret secretName in namespace argocd
// whose data keys name, server and config are the strings given, as they
// are: config is argo-cd's ClusterConfig in JSON (ArgoCDConfig makes one),
// or garbage.
func ArgoCDSecret(secretName, name, server, config string) Object {
	return Object{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": Object{"name": secretName, "namespace": ArgoCDNamespace, "labels": Object{ArgoCDSecretTypeLabel: "cluster"}},
		"data":     Object{"name": []byte(name), "server": []byte(server), "config": []byte(config)},
	}
}

// ArgoCDConfig is the config of an Argo CD cluster Secret that reaches a
// server of CA ca with a bearer token.
func ArgoCDConfig(token string, ca []byte) string {
	out, err := json.Marshal(Object{"bearerToken": token, "tlsClientConfig": Object{"insecure": false, "caData": base64.StdEncoding.EncodeToString(ca)}})
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return string(out)
}

// ArgoCDSecret is an Argo CD cluster Secret, cluster-<name>, that reaches s
// with its token, as `argocd cluster add` writes one.
func (s *Server) ArgoCDSecret(name string) Object {
	return ArgoCDSecret("cluster-"+name, name, s.URL, ArgoCDConfig(s.Token, s.CA))
}

// ManagedCluster is an accepted, joined and available OCM ManagedCluster
// whose client config is url and caBundle (base64 in JSON, as the API
// has it), as they are.
func ManagedCluster(name, url string, caBundle []byte) Object {
	return Object{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": Object{"name": name, "uid": "managedcluster-" + name},
		"spec":     Object{"hubAcceptsClient": true, "managedClusterClientConfigs": []any{Object{"url": url, "caBundle": caBundle}}},
		"status": Object{
			"version": Object{"kubernetes": "v1.36.3"},
			"conditions": []any{
				Object{"type": "ManagedClusterJoined", "status": "True", "reason": "Joined", "message": "joined", "lastTransitionTime": "2026-01-01T00:00:00Z"},
				Object{"type": "ManagedClusterConditionAvailable", "status": "True", "reason": "Available", "message": "available", "lastTransitionTime": "2026-01-01T00:00:00Z"},
			},
		},
	}
}

// ManagedServiceAccount is the ManagedServiceAccount name in the namespace
// of a managed cluster, with a UID its token Secret's owner reference names.
func ManagedServiceAccount(namespace, name string) Object {
	return Object{
		"apiVersion": "authentication.open-cluster-management.io/v1beta1", "kind": "ManagedServiceAccount",
		"metadata": Object{"name": name, "namespace": namespace, "uid": accountUID(namespace, name)},
		"spec":     Object{"rotation": Object{"enabled": true, "validity": "8640h0m0s"}},
	}
}

// TokenSecret is the token Secret of the ManagedServiceAccount account in
// namespace, as the addon writes it: labelled, owned by the account, with
// token and ca.crt, as they are.
func TokenSecret(namespace, account string, token, ca []byte) Object {
	return Object{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": Object{"name": account, "namespace": namespace,
			"labels": Object{ManagedServiceAccountLabel: "true"},
			"ownerReferences": []any{Object{"apiVersion": "authentication.open-cluster-management.io/v1beta1", "kind": "ManagedServiceAccount",
				"name": account, "uid": accountUID(namespace, account)}}},
		"data": Object{"token": token, "ca.crt": ca},
	}
}

func accountUID(namespace, name string) string { return "msa-" + namespace + "-" + name }

// OCMObjects are what a hub holds of a managed cluster name that s serves:
// its ManagedCluster, whose client config is s's URL and CA, the
// ManagedServiceAccount kubectl-fleet in namespace name, and its token
// Secret with s's token.
func (s *Server) OCMObjects(name string) []Object {
	return []Object{
		ManagedCluster(name, s.URL, s.CA),
		ManagedServiceAccount(name, ServiceAccount),
		TokenSecret(name, ServiceAccount, []byte(s.Token), s.CA),
	}
}

// Application is a synced and healthy Argo CD Application in namespace
// argocd that deploys repoURL to the cluster of server.
func Application(name, repoURL, server string) Object {
	return Object{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": Object{"name": name, "namespace": ArgoCDNamespace, "uid": "application-" + name},
		"spec": Object{
			"project":     "default",
			"source":      Object{"repoURL": repoURL, "path": "apps", "targetRevision": "main"},
			"destination": Object{"server": server, "namespace": "default"},
			"syncPolicy":  Object{"automated": Object{"prune": true}},
		},
		"status": Object{
			"sync":         Object{"status": "Synced", "revision": "0123456789abcdef0123456789abcdef01234567"},
			"health":       Object{"status": "Healthy"},
			"reconciledAt": "2026-01-01T00:00:00Z",
		},
	}
}

// Set sets the field of o at path to v, making the maps on the way; one
// that is not a map is replaced.
func Set(o Object, v any, path ...string) {
	for _, k := range path[:len(path)-1] {
		next, ok := o[k].(map[string]any)
		if !ok {
			next = Object{}
			o[k] = next
		}
		o = next
	}
	o[path[len(path)-1]] = v
}

// serveObjects answers a request for a kind of Kinds: a list (of every
// namespace or of one, with label and field selectors) or a get by name.
// It reports false for any other request, and for a kind the server holds
// no Object of (but Secrets, which the kubeconfig Secrets of its Clusters
// are, always served).
func (s *Server) serveObjects(w http.ResponseWriter, r *http.Request) bool {
	kind, namespace, name, ok := route(r.URL.Path)
	if !ok {
		return false
	}
	items := s.objectsOf(kind)
	if len(items) == 0 && kind.Kind != "Secret" {
		return false
	}
	if name != "" {
		for _, o := range items {
			if namespaceOf(o) == namespace && nameOf(o) == name {
				writeJSON(w, o)
				return true
			}
		}
		notFound(w)
		return true
	}
	sel, err := selectorOf(r)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"invalid selector"}`))
		return true
	}
	out := []any{}
	for _, o := range items {
		if (namespace == "" || namespaceOf(o) == namespace) && sel.matches(o) {
			out = append(out, o)
		}
	}
	writeJSON(w, Object{"apiVersion": kind.APIVersion, "kind": kind.Kind + "List", "metadata": Object{"resourceVersion": "1"}, "items": out})
	return true
}

// route parses an API path: /api/v1/RESOURCE, /apis/GROUP/VERSION/RESOURCE,
// either with namespaces/NAMESPACE/ before the resource and /NAME after.
func route(path string) (kind Kind, namespace, name string, ok bool) {
	var gv string
	var rest []string
	switch parts := strings.Split(strings.Trim(path, "/"), "/"); {
	case len(parts) >= 3 && parts[0] == "api":
		gv, rest = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gv, rest = parts[1]+"/"+parts[2], parts[3:]
	default:
		return Kind{}, "", "", false
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		namespace, rest = rest[1], rest[2:]
	}
	if len(rest) == 0 || len(rest) > 2 {
		return Kind{}, "", "", false
	}
	if len(rest) == 2 {
		name = rest[1]
	}
	for _, k := range Kinds() {
		if k.APIVersion == gv && k.Resource == rest[0] && (k.Namespaced || namespace == "") {
			return k, namespace, name, true
		}
	}
	return Kind{}, "", "", false
}

// objectsOf is every Object of kind the server holds: for Secrets, the
// kubeconfig Secrets of its Clusters first.
func (s *Server) objectsOf(kind Kind) []Object {
	var out []Object
	if kind.Kind == "Secret" {
		for _, item := range s.secretList()["items"].([]any) {
			out = append(out, item.(map[string]any))
		}
	}
	for _, o := range s.Objects {
		if o["apiVersion"] == kind.APIVersion && o["kind"] == kind.Kind {
			out = append(out, o)
		}
	}
	return out
}

func metadataOf(o Object) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

func nameOf(o Object) string {
	s, _ := metadataOf(o)["name"].(string)
	return s
}

func namespaceOf(o Object) string {
	s, _ := metadataOf(o)["namespace"].(string)
	return s
}

// selector is a list request's label and field selectors.
type selector struct {
	labels labels.Selector
	fields fields.Selector
}

func selectorOf(r *http.Request) (selector, error) {
	q := r.URL.Query()
	l, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return selector{}, err
	}
	f, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return selector{}, err
	}
	return selector{labels: l, fields: f}, nil
}

// matches reports whether o has the labels and fields (metadata.name,
// metadata.namespace, and a Secret's type) the selector asks for.
func (sel selector) matches(o Object) bool {
	set := labels.Set{}
	if m, ok := metadataOf(o)["labels"].(map[string]any); ok {
		for k, v := range m {
			if s, ok := v.(string); ok {
				set[k] = s
			}
		}
	}
	typ, _ := o["type"].(string)
	return sel.labels.Matches(set) && sel.fields.Matches(fields.Set{"metadata.name": nameOf(o), "metadata.namespace": namespaceOf(o), "type": typ})
}
