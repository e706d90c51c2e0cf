package cmd_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// SIGINT during a thaw (its first wave waiting for a Kustomization no
// controller will reconcile) ends it with every object either resumed,
// annotations cleared, or still in the freeze, annotations whole: the
// second wave is not begun, and a thaw run again lifts the rest.
func TestSignalDuringAThaw(t *testing.T) {
	needFleets(t)
	f := reliabilityFleet.get(t)
	const name = "ctrl-c"
	// The slow master answers a minute per round trip: the walks give up
	// on it after 5 s, a failed result of its own.
	walk := []string{"--cluster-timeout", "5s"}
	t.Cleanup(func() { onFleet(t, f, append([]string{"thaw", name}, walk...)...) })
	ks := func(member, ns, obj string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"})
		if err := f.Members[member].Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: obj}, u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	root := func() *unstructured.Unstructured { return ks("", "flux-system", "flux-system") }
	master := func() *unstructured.Unstructured { return ks("no-helmreleases", "flux-system", "tenants") }
	for _, args := range [][]string{
		{"freeze", name, "--all", "--level", "root", "--kind", "ks", "--reason", "signal"},
		{"freeze", name, "no-helmreleases", "--kind", "ks", "--reason", "signal"},
	} {
		if r := onFleet(t, f, append(args, walk...)...); r.code != 0 && r.code != 3 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if !isSuspended(root()) || master().GetAnnotations()[ops.FreezeAnnotation] != name {
		t.Fatalf("the freeze: root %v, master %v", root().GetAnnotations(), master().GetAnnotations())
	}
	p := startPlugin(t, plugin(t), append([]string{"--kubeconfig", f.Kubeconfig, "--color", "never", "thaw", name, "--wait", "--timeout", "10m"}, walk...)...)
	// Wave 1, the root's Kustomization, is resumed once it is no longer
	// suspended; the thaw then waits for a controller the sandbox does
	// not run.
	waitFor(t, time.Minute, "the root's Kustomization resumed", func() bool { return !isSuspended(root()) })
	p.signal(t, syscall.SIGINT)
	p.wantInterrupted(t, syscall.SIGINT)
	out := p.stdout.String()
	if !strings.Contains(out, "interrupted before wave 2") {
		t.Errorf("want the table saying wave 2 was not begun:\n%s\n%s", out, p.stderr.String())
	}
	if ann := root().GetAnnotations(); ann[ops.FreezeAnnotation] != "" || ann[ops.SuspendedByAnnotation] != "" {
		t.Errorf("the resumed Kustomization keeps the freeze's annotations: %v", ann)
	}
	m := master()
	if ann := m.GetAnnotations(); !isSuspended(m) || ann[ops.FreezeAnnotation] != name || ann[ops.SuspendedByAnnotation] == "" || ann[ops.SuspendedAtAnnotation] == "" || ann[ops.SuspendReasonAnnotation] != "signal" {
		t.Errorf("the wave not begun is not whole in the freeze: suspended %t, %v", isSuspended(m), ann)
	}
	// Run again, it lifts the rest.
	if r := onFleet(t, f, append([]string{"thaw", name, "-o", "json"}, walk...)...); !strings.Contains(r.stdout, `"result": "resumed"`) || isSuspended(master()) {
		t.Errorf("the thaw run again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := onFleet(t, f, "freezes", "-o", "json", "--timeout", "5s")
	if got := decode[struct{ Freezes []ops.Freeze }](t, r); len(got.Freezes) != 0 {
		t.Errorf("freezes after the thaws: %+v", got.Freezes)
	}
}
