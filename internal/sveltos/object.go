package sveltos

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// object is what kubectl fleet reads of a SveltosCluster, field by field:
// a field of the wrong type is a problem of its own object, said on its
// node, and no other object's.
type object struct {
	namespace, name string
	labels          map[string]string
	reg             Registration
	// renewal is spec.tokenRequestRenewalOption set: Sveltos renews the
	// kubeconfig's token and writes it at renewalKey.
	renewal    bool
	renewalKey string
	// keyName is spec.kubeconfigKeyName.
	keyName string
	// access is the first problem with a field that says where the
	// cluster's kubeconfig is (spec.kubeconfigName, kubeconfigKeyName,
	// pullMode, workloadIdentity, tokenRequestRenewalOption): with one,
	// Sveltos's choice is unknown, and no Secret is read.
	access string
}

// readObject reads a SveltosCluster listed as u.
func readObject(u *unstructured.Unstructured) *object {
	o := &object{namespace: u.GetNamespace(), name: u.GetName(), labels: u.GetLabels()}
	content := u.UnstructuredContent()
	access := &fields{obj: content}
	// A name or key cut (longer than any can be) names no Secret and no
	// key: an error says so, the name cut.
	kubeconfigName := truncate(access.str("spec", "kubeconfigName"), MaxField)
	o.keyName = truncate(access.str("spec", "kubeconfigKeyName"), MaxField)
	o.reg.PullMode = access.boolean("spec", "pullMode")
	if access.get("spec", "workloadIdentity") != nil {
		o.reg.WorkloadIdentity = truncate(access.str("spec", "workloadIdentity", "provider"), MaxField)
		if o.reg.WorkloadIdentity == "" {
			o.reg.WorkloadIdentity = "unnamed"
		}
	}
	if access.get("spec", "tokenRequestRenewalOption") != nil {
		o.renewal = true
		o.renewalKey = truncate(access.str("spec", "tokenRequestRenewalOption", "kubeconfigKeyName"), MaxField)
		if o.renewalKey == "" {
			o.renewalKey = RenewalKey
		}
	}
	o.access = access.problem
	if o.access == "" && !o.reg.PullMode && o.reg.WorkloadIdentity == "" {
		// libsveltos reads no Secret in pull mode or with a workload
		// identity (lib/clusterproxy/clusterproxy.go:130-137).
		o.reg.KubeconfigName = truncate(SecretName(o.name, kubeconfigName), MaxField)
		o.reg.Key = o.keyName
	}
	spec := &fields{obj: content, problem: access.problem}
	o.reg.Paused = spec.boolean("spec", "paused")
	o.reg.SpecUnreadable = spec.problem
	status := &fields{obj: content}
	o.reg.Ready = status.boolean("status", "ready")
	o.reg.Version = truncate(status.str("status", "version"), MaxField)
	o.reg.ConnectionStatus = truncate(status.str("status", "connectionStatus"), MaxField)
	o.reg.FailureMessage = truncate(status.str("status", "failureMessage"), MaxFailureMessage)
	o.reg.StatusUnreadable = status.problem
	o.reg.Env = truncate(o.labels[EnvLabel], MaxField)
	return o
}

// fields reads fields of an unstructured object, keeping the first
// problem: a field, or an object on its path, of another type. A problem
// names the field and the types, never the value, which is the cluster's.
type fields struct {
	obj     map[string]any
	problem string
}

// get is the field at path; nil when it is absent or null, or not
// reachable.
func (f *fields) get(path ...string) any {
	var cur any = f.obj
	for i, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			f.fail(path[:i], "an object", cur)
			return nil
		}
		if cur = m[k]; cur == nil {
			return nil
		}
	}
	return cur
}

func (f *fields) str(path ...string) string {
	v := f.get(path...)
	s, ok := v.(string)
	if v != nil && !ok {
		f.fail(path, "a string", v)
	}
	return s
}

func (f *fields) boolean(path ...string) bool {
	v := f.get(path...)
	b, ok := v.(bool)
	if v != nil && !ok {
		f.fail(path, "a boolean", v)
	}
	return b
}

func (f *fields) fail(path []string, want string, got any) {
	if f.problem == "" {
		f.problem = fmt.Sprintf("%s is %s, not %s", strings.Join(path, "."), jsonType(got), want)
	}
}

// jsonType names the JSON type of a value decoded from JSON.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int32, int, float64, float32:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "of another type"
}
