package sandbox_test

import (
	"fmt"
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
		{"an unknown edge", "name: mom\nclusters: [{name: a, edges: [acm]}]", `mom/a: edge "acm" is not one of capi, argocd, ocm, clusterprofile, sveltos, hypershift`},
		{"an ocm edge without a hub", "name: mom\nclusters: [{name: a, edges: [ocm]}]", "mom/a: the ocm edge needs a hub: give its parent mom ocmHub: true"},
		{"an ocm edge under a hub's child that is none", "name: mom\nocmHub: true\nclusters: [{name: a, clusters: [{name: b, edges: [capi, ocm]}]}]", "mom/a/b: the ocm edge needs a hub: give its parent a ocmHub: true"},
		{"ocm without the ocm edge", "name: mom\nocmHub: true\nclusters: [{name: a, edges: [capi], ocm: {clusterSet: blue}}]", "mom/a: ocm is what an ocm edge's hub knows of the cluster: give edges with ocm"},
		{"a fault the ocm edge does not take", "name: mom\nocmHub: true\nclusters: [{name: a, edges: [capi, ocm], kubeconfig: exec}]", `mom/a: kubeconfig "exec" is no fault of an ocm edge, which takes valid, missing, garbage, unreachable, forbidden`},
		{"an Argo CD fault on an ocm edge", "name: mom\nocmHub: true\nclusters: [{name: a, edges: [argocd, ocm], kubeconfig: awsauth}]", `kubeconfig "awsauth" is no fault of an ocm edge`},
		{"an unknown availability", "name: mom\nocmHub: true\nclusters: [{name: a, edges: [ocm], ocm: {available: Maybe}}]", `mom/a: ocm: available "Maybe" is not one of True, False, Unknown`},
		{"a clusterSet that is no name", "name: mom\nocmHub: true\nclusters: [{name: a, edges: [ocm], ocm: {clusterSet: Blue_1}}]", `mom/a: ocm: clusterSet "Blue_1"`},
		{"a serviceAccount that is no name", "name: mom\nocmHub: true\nclusters: [{name: a, edges: [ocm], ocm: {serviceAccount: -x}}]", `mom/a: ocm: serviceAccount "-x"`},
		{"an ocm cluster whose name is no namespace", "name: mom\nocmHub: true\nclusters: [{name: Team_A, edges: [ocm]}]", `mom/Team_A: a cluster the ocm edge reaches names a namespace on its hub: "Team_A"`},
		{"the hub's own name", "name: mom\nocmHub: true\nclusters: [{name: local-cluster, edges: [ocm]}]", "mom/local-cluster: local-cluster is the hub's own ManagedCluster"},
		{"the forbidden fault's ServiceAccount", "name: mom\nocmHub: true\nclusters: [{name: a, edges: [ocm], ocm: {serviceAccount: fleet-no-rights}}]", `serviceAccount "fleet-no-rights" is the ServiceAccount without rights of forbidden faults`},
		{"two ManagedClusters of one name", "name: mom\nocmHub: true\nclusters: [{name: a, namespace: one, edges: [ocm]}, {name: a, namespace: two, edges: [capi, ocm]}]", "mom: two clusters named a have the ocm edge: a ManagedCluster has no namespace"},
		{"a hub with a fault", "name: mom\nclusters: [{name: a, kubeconfig: unreachable, ocmHub: true}]", "has no apiserver, so it can hold neither clusters, flux objects, a user kubeconfig, a shared server, latency, an ocmHub, argocd nor capiControllers"},
		{"a hub without CRDs", "name: mom\nclusters: [{name: a, noCRDs: true, ocmHub: true}]", "mom/a: a cluster with noCRDs can hold neither clusters, flux objects, an ocmHub nor argocd"},
		{"ocm on the root", "name: mom\nocm: {clusterSet: blue}", "mom: the root cluster takes neither edges nor ocm"},
		{"two argocd edges of one name", "name: mom\nclusters: [{name: a, namespace: one, edges: [argocd]}, {name: a, namespace: two, edges: [capi, argocd]}]", "mom: two clusters named a have the argocd edge: their cluster Secrets would both be argocd/cluster-a"},
		{"argocd on a fault", "name: mom\nclusters: [{name: a, kubeconfig: unreachable, argocd: true}]", `mom/a: a cluster with kubeconfig "unreachable" has no apiserver, so it can hold neither`},
		{"argocd without CRDs", "name: mom\nclusters: [{name: a, noCRDs: true, argocd: true}]", "mom/a: a cluster with noCRDs can hold neither clusters, flux objects, an ocmHub nor argocd"},
		{"argocd without CRDs on the root", "name: mom\nnoCRDs: true\nargocd: true", "mom: a cluster with noCRDs can be neither an ocmHub nor have argocd"},
		{"apps without argocd", "name: mom\napps: [{name: guestbook}]", "mom: apps are Argo CD Applications: give the cluster argocd: true"},
		{"apps of a child without argocd", "name: mom\nclusters: [{name: a, apps: [{name: guestbook}]}]", "mom/a: apps are Argo CD Applications: give the cluster argocd: true"},
		{"an app without a name", "name: mom\nargocd: true\napps: [{sync: Synced}]", "mom: apps[0]: an app needs a name"},
		{"an app name that is no name", "name: mom\nargocd: true\napps: [{name: Guest_Book}]", `mom: apps[0] Guest_Book: name "Guest_Book"`},
		{"an app namespace that is no namespace", "name: mom\nargocd: true\napps: [{name: g, namespace: a.b}]", `mom: apps[0] g: namespace "a.b"`},
		{"an unknown sync status", "name: mom\nargocd: true\napps: [{name: g, sync: synced}]", `mom: apps[0] g: sync "synced" is not one of Synced, OutOfSync, Unknown`},
		{"an unknown health status", "name: mom\nargocd: true\napps: [{name: ok}, {name: g, health: Sick}]", `mom: apps[1] g: health "Sick" is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown`},
		{"an unknown operation phase", "name: mom\nargocd: true\napps: [{name: g, operation: Terminating}]", `mom: apps[0] g: operation "Terminating" is not one of Succeeded, Failed, Error, Running`},
		{"an appSet that is no name", "name: mom\nargocd: true\napps: [{name: g, appSet: -set}]", `mom: apps[0] g: appSet "-set"`},
		{"automated that is no bool", "name: mom\nargocd: true\napps: [{name: g, automated: yes please}]", "failed to decode"},
		{"an unknown app key", "name: mom\nargocd: true\napps: [{name: g, prune: true}]", `unknown field "prune"`},
		{"the same app twice", "name: mom\nargocd: true\napps: [{name: g}, {name: g, namespace: argocd}]", "mom: apps[1] g: Application argocd/g appears twice"},
		{"a destination the argocd edge does not reach", "name: mom\nargocd: true\nclusters: [{name: aws}]\napps: [{name: g, destination: aws}]", "mom: apps[0] g: destination aws is a cluster mom does not reach by the argocd edge: give it edges with argocd"},
		{"a destination among a count the argocd edge does not reach", "name: mom\nargocd: true\nclusters: [{name: t, count: 3, kubeconfig: unreachable}]\napps: [{name: g, destination: t-0002}]", "mom: apps[0] g: destination t-0002 is a cluster mom does not reach by the argocd edge"},
		{"helmController without fluxControllers", "name: mom\nhelmController: true", "mom: helmController runs beside source-controller, which serves its charts: give fluxControllers: true too"},
		{"a HelmRelease in the spec of a helmController", "name: mom\nfluxControllers: true\nhelmController: true\nflux: [{kind: HelmRelease, name: x}]", "mom: flux[0]: a cluster with helmController installs its HelmReleases for real: declare them in the fixture repository"},
		{"capiControllers without CRDs", "name: mom\nnoCRDs: true\ncapiControllers: true", "mom: a cluster with noCRDs can be neither an ocmHub nor have argocd or capiControllers"},
		{"capiControllers on a fault", "name: mom\nclusters: [{name: a, kubeconfig: missing, capiControllers: true}]", "has no apiserver, so it can hold neither"},
		{"an unknown provision", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: cloud}]", `mom/a: provision "cloud" is not capi or inmemory`},
		{"provision without CAPI's controllers", "name: mom\nclusters: [{name: a, provision: capi}]", "mom/a: provision capi needs CAPI's controllers on the parent: give mom capiControllers: true"},
		{"a written child under CAPI's controllers", "name: mom\ncapiControllers: true\nclusters: [{name: a}]", "mom/a: mom runs CAPI's controllers, which write the status of every Cluster on it: give this child provision: capi or inmemory"},
		{"provision with a status", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: capi, phase: Failed}]", "mom/a: provision capi: CAPI writes the status"},
		{"provision with a fault", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: capi, kubeconfig: garbage}]", "mom/a: provision capi makes a CAPI Cluster and its kubeconfig Secret: it needs the capi edge and no kubeconfig fault"},
		{"provision without the capi edge", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: inmemory, edges: [argocd]}]", "it needs the capi edge"},
		{"provision capi with machines", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: capi, machines: {controlPlane: {replicas: 1}}}]", "mom/a: provision capi has no machines"},
		{"an in-memory cluster holding clusters", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: inmemory, clusters: [{name: b}]}]", "mom/a: provision inmemory has no apiserver of the sandbox's"},
		{"an in-memory machine not ready", "name: mom\ncapiControllers: true\nclusters: [{name: a, provision: inmemory, machines: {deployments: [{name: md, replicas: 2, notReady: 1}]}}]", "mom/a: provision inmemory: CAPI makes the machines, so they take replicas"},
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

func TestParseSpecFillsOCMDefaults(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte(`
name: hub
version: v1.35.2
ocmHub: true
clusters:
  - name: edge-1
    edges: [ocm]
  - name: edge-2
    version: v1.34.1
    edges: [capi, ocm]
    ocm: {accepted: false, available: Unknown, clusterSet: blue, serviceAccount: reader}
  - name: team-a
    ocmHub: true
    clusters:
      - {name: far, edges: [ocm], ocm: {version: v1.33.0}, kubeconfig: forbidden}
`))
	if err != nil {
		t.Fatal(err)
	}
	edge1, edge2, far := spec.Clusters[0].OCM, spec.Clusters[1].OCM, spec.Clusters[2].Clusters[0].OCM
	if edge1 == nil || edge2 == nil || far == nil || spec.Clusters[2].OCM != nil {
		t.Fatalf("ocm specs: %v %v %v, and team-a, reached by capi alone, %v", edge1, edge2, far, spec.Clusters[2].OCM)
	}
	checks := []struct{ what, got, want string }{
		{"accepted", fmt.Sprint(*edge1.Accepted, *edge2.Accepted), "true false"},
		{"joined", fmt.Sprint(*edge1.Joined, *edge2.Joined), "true true"},
		{"available", edge1.Available + " " + edge2.Available, "True Unknown"},
		{"clusterSet", edge1.ClusterSet + "|" + edge2.ClusterSet, "|blue"},
		{"version: the cluster's, declared or inherited, or its own", edge1.Version + " " + edge2.Version + " " + far.Version, "v1.35.2 v1.34.1 v1.33.0"},
		{"serviceAccount", edge1.ServiceAccount + " " + edge2.ServiceAccount, sandbox.DefaultOCMServiceAccount + " reader"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
}

func TestParseSpecFillsAppDefaults(t *testing.T) {
	spec, err := sandbox.ParseSpec([]byte(`
name: hub
argocd: true
clusters:
  - {name: aws, namespace: legacy}
  - {name: aws, edges: [argocd]}
  - {name: t, count: 2, edges: [capi, argocd]}
apps:
  - name: guestbook
  - name: aws-apps
    namespace: apps
    destination: aws
    repoURL: https://git.example/aws.git
    path: clusters/aws
    targetRevision: main
    sync: OutOfSync
    health: Degraded
    revision: 9d1e0f2c3b4a59687766554433221100ffeeddcc
    operation: Failed
    message: one or more objects failed to apply
    automated: false
    skipReconcile: true
    appSet: per-cluster
  - {name: t-apps, destination: t-0002}
  - {name: elsewhere, destination: gone}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !spec.ArgoCD || len(spec.Apps) != 4 {
		t.Fatalf("argocd %v, apps %+v", spec.ArgoCD, spec.Apps)
	}
	g, aws, ta, gone := spec.Apps[0], spec.Apps[1], spec.Apps[2], spec.Apps[3]
	checks := []struct{ what, got, want string }{
		{"namespace", g.Namespace + " " + aws.Namespace, sandbox.ArgoCDNamespace + " apps"},
		{"destination", g.Destination + " " + aws.Destination + " " + ta.Destination + " " + gone.Destination, sandbox.DestinationInCluster + " aws t-0002 gone"},
		{"repoURL", g.RepoURL + " " + aws.RepoURL, sandbox.DefaultAppRepoURL + " https://git.example/aws.git"},
		{"path", g.Path + " " + aws.Path, "apps/guestbook clusters/aws"},
		{"targetRevision", g.TargetRevision + " " + aws.TargetRevision, sandbox.DefaultAppTargetRevision + " main"},
		{"sync", g.Sync + " " + aws.Sync, "Synced OutOfSync"},
		{"health", g.Health + " " + aws.Health, "Healthy Degraded"},
		{"revision", g.Revision + " " + aws.Revision, sandbox.DefaultAppRevision + " 9d1e0f2c3b4a59687766554433221100ffeeddcc"},
		{"operation", g.Operation + "|" + aws.Operation, "|Failed"},
		{"automated", fmt.Sprint(g.Automated == nil, *aws.Automated), "true false"},
		{"skipReconcile", fmt.Sprint(g.SkipReconcile, aws.SkipReconcile), "false true"},
		{"appSet", g.AppSet + "|" + aws.AppSet, "|per-cluster"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
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
	spec, err = sandbox.ParseSpec([]byte("name: mom\nclusters: [{name: t, count: 10000, kubeconfig: missing}]"))
	if err != nil || spec.Clusters[0].Name != "t-00001" || spec.Clusters[9999].Name != "t-10000" {
		t.Fatalf("five-digit counts: %v", err)
	}
	// Counts that multiply past MaxClusters are refused, not made.
	_, err = sandbox.ParseSpec([]byte("name: mom\nclusters: [{name: m, count: 200, clusters: [{name: t, count: 200, kubeconfig: missing}]}]"))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d clusters once counts are expanded", sandbox.MaxClusters)) {
		t.Errorf("200 × 200 clusters: %v; want refused", err)
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
