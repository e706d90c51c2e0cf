package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

func TestParseSpecFillsDefaults(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte(`
name: mom
flux:
  - kind: Kustomization
    name: flux-system
clusters:
  - name: aws
    clusters:
      - name: team-a
        version: v1.35.0
`))
	if err != nil {
		t.Fatal(err)
	}
	aws := spec.Clusters[0]
	teamA := aws.Clusters[0]
	checks := []struct{ what, got, want string }{
		{"root version", spec.Version, sandbox.DefaultVersion},
		{"flux namespace", spec.Flux[0].Namespace, "flux-system"},
		{"cluster namespace", aws.Namespace, "default"},
		{"provider", aws.Provider, "docker"},
		{"version from the root", aws.Version, sandbox.DefaultVersion},
		{"own version", teamA.Version, "v1.35.0"},
		{"phase", aws.Phase, "Provisioned"},
		{"kubeconfig", aws.Kubeconfig, sandbox.KubeconfigValid},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if !*spec.Flux[0].Ready || !*aws.Available {
		t.Error("flux objects default to ready and Provisioned clusters to available")
	}
}

func TestParseSpecRejectsMistakes(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"no name", "clusters: []", "a cluster needs a name"},
		{"an unknown key", "name: mom\nclusterz: []", `unknown field "clusterz"`},
		{"an unknown provider", "name: mom\nclusters: [{name: a, provider: ibm}]", `mom/a: provider "ibm" is not one of`},
		{"an unknown fault", "name: mom\nclusters: [{name: a, kubeconfig: broken}]", `mom/a: kubeconfig "broken" is not one of valid, missing`},
		{"children under a fault", "name: mom\nclusters: [{name: a, kubeconfig: missing, clusters: [{name: b}]}]", "has no apiserver, so it can hold neither"},
		{"a bad flux kind", "name: mom\nflux: [{kind: Bucket, name: b}]", "mom: flux[0]: needs a name and a kind of Kustomization"},
		{"a bad sourceRef", "name: mom\nflux: [{kind: Kustomization, name: k, sourceRef: a/b/c/d}]", `sourceRef "a/b/c/d" is not KIND/NAME`},
		{"a bad declaredBy", "name: mom\nclusters: [{name: a, declaredBy: HelmRelease/x}]", `declaredBy "HelmRelease/x" is not KIND/NAMESPACE/NAME`},
		{"the same cluster twice", "name: mom\nclusters: [{name: a, namespace: x, kubeconfig: missing}, {name: a, namespace: x, kubeconfig: missing}]", "cluster x/a appears twice"},
		{"a count that names a sibling", "name: mom\nclusters: [{name: t, count: 2}, {name: t-0002}]", "cluster default/t-0002 appears twice once counts are expanded"},
		{"a shared server without count", "name: mom\nclusters: [{name: a, sharedServer: true}]", "mom/a: sharedServer serves the clusters of a count by one apiserver: give count"},
		{"a negative count", "name: mom\nclusters: [{name: a, count: -1}]", "mom/a: count -1 is negative"},
		{"a latency that is no duration", "name: mom\nclusters: [{name: a, latency: fast}]", "failed to decode"},
		{"latency on a fault", "name: mom\nclusters: [{name: a, kubeconfig: unreachable, latency: 50ms}]", "has no apiserver"},
		{"a count on the root", "name: mom\ncount: 3", "the root cluster takes neither count, sharedServer nor latency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox.ParseSpec([]byte(tt.spec))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseSpecExpandsCounts(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte(`
name: mom
clusters:
  - name: master
    count: 2
    sharedServer: true
    latency: 50ms
    clusters:
      - name: tenant
        count: 3
        labels: {tier: edge}
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range spec.Clusters {
		names = append(names, m.Name)
		if m.Latency == nil || m.Latency.Duration != 50*time.Millisecond || !m.SharedServer {
			t.Errorf("%s lost the entry's spec: %+v", m.Name, m)
		}
		for _, tn := range m.Clusters {
			names = append(names, m.Name+"/"+tn.Name)
			if tn.Labels["tier"] != "edge" || tn.Provider != "docker" {
				t.Errorf("%s/%s lost the entry's spec: %+v", m.Name, tn.Name, tn)
			}
		}
	}
	want := "master-0001 master-0001/tenant-0001 master-0001/tenant-0002 master-0001/tenant-0003 " +
		"master-0002 master-0002/tenant-0001 master-0002/tenant-0002 master-0002/tenant-0003"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("clusters %s, want %s", got, want)
	}
	spec, err = sandbox.ParseSpec([]byte("name: mom\nclusters: [{name: t, count: 12345, kubeconfig: missing}]"))
	if err != nil || spec.Clusters[0].Name != "t-00001" || spec.Clusters[12344].Name != "t-12345" {
		t.Errorf("five-digit counts: %v, first %q", err, spec.Clusters[0].Name)
	}
}

func TestCheckedInSpecsParse(t *testing.T) {
	files, err := filepath.Glob("../../testdata/fleets/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no specs found: %v", err)
	}
	for _, f := range files {
		if _, err := sandbox.LoadSpec(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestFindAssetsSaysWhichTargetToRun(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	_, err := sandbox.FindAssets()
	if err == nil || !strings.Contains(err.Error(), "run `make sandbox-bins`") {
		t.Errorf("err = %v, want it to name `make sandbox-bins`", err)
	}
}

func TestCheckoutRootOutsideTheCheckout(t *testing.T) {
	t.Chdir(os.TempDir())
	if _, err := sandbox.CheckoutRoot(); err == nil || !strings.Contains(err.Error(), "not inside a kubectl-fleet checkout") {
		t.Errorf("err = %v, want it to say the directory is not a checkout", err)
	}
}
