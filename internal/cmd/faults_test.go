package cmd_test

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The fault suite (issue 12) on the reliability fleet: every command runs
// against a master whose RBAC hides Secrets, one whose RBAC hides
// HelmReleases, a cluster slower than the timeout, 5,000 Flux objects and
// a cluster without CRDs. None hangs, none reports success for what it
// could not do.
func TestFaultSuiteEveryCommand(t *testing.T) {
	needFleets(t)
	cases := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"tree"}, 3, []string{"forbidden: cannot get secret tenants/team-a-kubeconfig", "context deadline exceeded | TLS handshake timeout"}},
		{[]string{"list", "-o", "wide"}, 3, []string{"forbidden: cannot get secret", "helmreleases"}},
		{[]string{"drift"}, 1, []string{"unreadable"}},
		{[]string{"diff", "--git", t.TempDir()}, 2, nil},
		{[]string{"get-kubeconfig", "no-secrets/team-a"}, 1, []string{`the user needs the RBAC rule {apiGroups: [""], resources: ["secrets"], verbs: ["get"]} in namespace tenants`}},
		{[]string{"get-kubeconfig", "slow"}, 0, nil},
		{[]string{"describe", "no-secrets/team-a"}, 3, []string{"forbidden: cannot get secret", "Cluster/team-a"}},
		{[]string{"describe", "no-helmreleases"}, 3, []string{"HelmReleases"}},
		{[]string{"exec", "--", "get", "ns", "default", "-o", "name"}, 3, []string{"no-helmreleases: namespace/default", "cluster not reached"}},
		{[]string{"reconcile", "--all", "--dry-run"}, 3, []string{"HelmReleases not listed, none acted on"}},
		{[]string{"suspend", "--all", "--dry-run"}, 3, []string{"HelmReleases not listed, none acted on"}},
		{[]string{"resume", "--all", "--dry-run"}, 3, []string{"HelmReleases not listed, none acted on"}},
	}
	// The commands run at once: each waits out its timeout on slow. 15 s
	// is long enough for every cluster but slow, whose every round trip
	// takes a minute, on a loaded machine too.
	argLists := make([][]string, len(cases))
	for i, tc := range cases {
		argLists[i] = faultCommand(reliabilityFleet.get(t).Kubeconfig, "15s", tc.args)
	}
	results := runAtOnce(t, 2*time.Minute, argLists)
	for i, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { assertSays(t, results[i], tc.code, tc.want) })
	}
}

// faultCommand is args as the fault suite runs them: on kubeconfig,
// without color, the command's timeout flag right after the command (exec
// passes what follows "--" to kubectl).
func faultCommand(kubeconfig, timeout string, args []string) []string {
	flag := "--timeout"
	switch args[0] {
	case "reconcile", "suspend", "resume":
		flag = "--cluster-timeout"
	}
	return append([]string{"--kubeconfig", kubeconfig, "--color", "never", args[0], flag, timeout}, args[1:]...)
}

// assertSays checks a command's exit code and that its output says each
// of want; "a | b" is either (a slow cluster times out in its TLS
// handshake or in a request, as the machine's load has it).
func assertSays(t *testing.T, r result, code int, want []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !slices.ContainsFunc(strings.Split(w, " | "), func(w string) bool { return strings.Contains(r.stdout+r.stderr, w) }) {
			t.Errorf("the output does not say %q:\n%s\n%s", w, r.stdout, r.stderr)
		}
	}
}

// A cluster read in part (HelmReleases forbidden) keeps what was read,
// says what it could not read, and a Flux operation on it fails for that
// kind: exit 3, never 0 (defect 7).
func TestPartialReadIsPartial(t *testing.T) {
	for _, f := range onBoth("reliability") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "tree", "no-helmreleases", "-o", "json")
			if r.code != 3 {
				t.Errorf("tree: exit %d, want 3: %s", r.code, r.stderr)
			}
			n := decode[struct {
				Flux struct {
					Kustomizations struct{ Total int } `json:"kustomizations"`
					Unread         map[string]string   `json:"unread"`
				} `json:"flux"`
			}](t, r)
			if n.Flux.Kustomizations.Total != 1 || !strings.Contains(n.Flux.Unread["HelmRelease"], "forbidden") {
				t.Errorf("the partial read lost what was read or did not say what was not: %+v", n.Flux)
			}
			for _, verb := range []string{"reconcile", "suspend", "resume"} {
				r := f.run(t, verb, "no-helmreleases", "--dry-run")
				if r.code != 3 || !strings.Contains(r.stdout, "HelmReleases not listed, none acted on") {
					t.Errorf("%s on a cluster whose HelmReleases could not be listed: exit %d, want 3 and the kind named:\n%s\n%s", verb, r.code, r.stdout, r.stderr)
				}
			}
			// --kind ks does not need the HelmReleases.
			if r := f.run(t, "reconcile", "no-helmreleases", "--kind", "ks", "--dry-run"); r.code != 0 {
				t.Errorf("reconcile --kind ks: exit %d, want 0: %s %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// 5,000 Flux objects on one cluster are all read, and a cluster without
// the CAPI and Flux CRDs is read as one with no clusters and no Flux.
func TestLargeAndBareClusters(t *testing.T) {
	for _, f := range onBoth("reliability") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			r := f.run(t, "list", "bulk", "bare", "-o", "json")
			type item struct {
				Path  string `json:"path"`
				Error string `json:"error"`
				Flux  *struct {
					Installed      bool                       `json:"installed"`
					Kustomizations struct{ Total, Ready int } `json:"kustomizations"`
				} `json:"flux"`
			}
			l := decode[struct{ Items []item }](t, r)
			got := map[string]item{}
			for _, it := range l.Items {
				got[it.Path] = it
			}
			if b := got["bulk"]; b.Error != "" || b.Flux == nil || b.Flux.Kustomizations.Total != 5000 {
				t.Errorf("bulk: %+v, want 5000 Kustomizations read", b)
			}
			if b := got["bare"]; b.Error != "" || b.Flux == nil || b.Flux.Installed {
				t.Errorf("bare: %+v, want read, Flux not installed", b)
			}
		})
	}
}

// The RBAC rules a user needs to read what Argo CD and OCM keep, as the
// errors name them.
const (
	applicationsRule    = `the user needs the RBAC rule {apiGroups: ["argoproj.io"], resources: ["applications"], verbs: ["list"]}`
	managedClustersRule = `the user needs the RBAC rule {apiGroups: ["cluster.open-cluster-management.io"], resources: ["managedclusters"], verbs: ["list"]}`
)

// The fault suite on the hub (hub.yaml): users whose RBAC leaves out what
// Argo CD or OCM keeps. no-mcs is an OCM hub whose user may not list
// ManagedClusters: an error on its node naming the missing rule, and the
// rest of it read. no-apps runs Argo CD and its user may not list
// Applications: the Flux and Argo CD operations say so naming the rule.
// prod-eu's user may not list Applications either, but prod-eu serves
// none: its 403 is no error (discovery tells the two apart), and nothing
// about it fails.
func TestFaultSuiteArgoCDAndOCMRBAC(t *testing.T) {
	needFleets(t)
	ocmForbidden := "edges/ocm: forbidden: cannot list OCM ManagedClusters: " + managedClustersRule
	appsForbidden := "Applications not listed, none acted on: forbidden: cannot list Argo CD Applications: " + applicationsRule
	cases := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"tree"}, 3, []string{ocmForbidden}},
		{[]string{"tree", "no-mcs"}, 3, []string{ocmForbidden}},
		{[]string{"tree", "prod-eu"}, 0, nil},
		{[]string{"list", "-o", "wide"}, 3, []string{"no-mcs ", "no-apps ", "prod-eu "}},
		{[]string{"list", "prod-eu", "no-mcs"}, 3, []string{"1 of 2 clusters could not be read completely"}},
		{[]string{"drift"}, 1, []string{ocmForbidden}},
		{[]string{"drift", "prod-eu", "--kind", "unreadable"}, 0, nil},
		{[]string{"get-kubeconfig", "no-apps"}, 0, nil},
		{[]string{"get-kubeconfig", "no-mcs"}, 0, nil},
		{[]string{"get-kubeconfig", "prod-eu"}, 0, nil},
		{[]string{"exec", "--", "get", "ns", "default", "-o", "name"}, 3, []string{"no-apps: namespace/default", "no-mcs: namespace/default", "prod-eu: namespace/default"}},
		{[]string{"reconcile", "--all", "--dry-run"}, 3, []string{appsForbidden}},
		{[]string{"suspend", "--all", "--dry-run"}, 3, []string{appsForbidden}},
		{[]string{"resume", "--all", "--dry-run"}, 3, []string{appsForbidden}},
		{[]string{"reconcile", "prod-eu", "--dry-run"}, 0, nil},
	}
	argLists := make([][]string, len(cases))
	for i, tc := range cases {
		argLists[i] = faultCommand(hubFleet.get(t).Kubeconfig, "30s", tc.args)
	}
	results := runAtOnce(t, 2*time.Minute, argLists)
	for i, tc := range cases {
		r := results[i]
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			assertSays(t, r, tc.code, tc.want)
			// prod-eu's forbidden list of Applications is no error of it.
			for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
				if strings.HasPrefix(strings.TrimLeft(line, " │├└─✗"), "prod-eu") && strings.Contains(line, "forbidden") {
					t.Errorf("prod-eu, which serves no Applications, says its user may not list them: %s", line)
				}
			}
		})
	}
}

// What describe, list and tree say of the same faults, one cluster at a
// time: a cluster whose Applications or ManagedClusters its user may not
// list is read in part, and the command names the missing rule and exits
// 3; prod-eu, which serves no Applications, is read whole, and describe
// reads no CAPI Cluster of it (none reaches it).
func TestFaultSuiteOneClusterAtATime(t *testing.T) {
	for _, f := range onBoth("hub") {
		t.Run(f.name, func(t *testing.T) {
			f := f.begin(t)
			cases := []struct {
				args []string
				code int
				want string
			}{
				{[]string{"tree", "no-apps"}, 3, applicationsRule},
				{[]string{"describe", "no-apps"}, 3, applicationsRule},
				{[]string{"drift", "no-apps", "--kind", "unreadable"}, 1, applicationsRule},
				{[]string{"list", "no-apps", "-o", "wide"}, 3, applicationsRule},
				{[]string{"describe", "no-mcs"}, 3, managedClustersRule},
				{[]string{"list", "no-mcs", "-o", "wide"}, 3, managedClustersRule},
				{[]string{"describe", "prod-eu"}, 0, "Clusters"},
				{[]string{"describe", "edge-1"}, 0, "Argo CD"},
			}
			argLists := make([][]string, len(cases))
			for i, tc := range cases {
				argLists[i] = append([]string{"--kubeconfig", f.fleet.Kubeconfig, "--color", "never", tc.args[0], "--timeout", "30s"}, tc.args[1:]...)
			}
			results := runAtOnceWith(t, f.deps, 2*time.Minute, argLists)
			for i, tc := range cases {
				r := results[i]
				t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
					if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
						t.Errorf("exit %d, want %d and the output to say %q:\n%s\n%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
					}
				})
			}
		})
	}
}
