package cmd_test

// TestFrozen freezes the -o json and -o yaml of every read-only command on
// the fleet of every test spec into testdata/frozen/FLEET/SLUG.{json,yaml},
// byte for byte after scrubFrozen, with each command's exit code: the
// safety net of a redesign of the model (fleet.Node) that must not change
// them. `go test -run TestFrozen -update ./internal/cmd/` rewrites them.
//
// The goldens were written on apiservers. A spec that sandbox.StartInMemory
// builds (demo, faults, drift, reliability, hub, scale) is read in memory,
// under -short too, each command of a fleet at once: that its goldens
// pass unchanged is what shows that its in-memory fleet answers as its
// apiservers do. The others (diff, flux, real: real controllers; watch: no
// watch cache) are read on their shared fleets.
//
// Frozen, on each fleet (on the selection its frozenFleet says):
//   - tree -o json, tree -o yaml, tree --drift -o json;
//   - list -o json, list -o yaml, list --drift -o json, get clusters -o json;
//   - drift -o json, drift -o yaml;
//   - reconcile, suspend and resume --dry-run -o json (--all where the
//     whole fleet is frozen; a dry run writes nothing);
//   - describe PATH -o json: every master, a tenant, and the faulty
//     clusters of the fleet.
//
// Left out:
//   - get-kubeconfig: it has no -o; it prints the Secret's kubeconfig, whose
//     certificates and keys the sandbox makes anew on every start.
//   - exec: kubectl's output, prefixed; no JSON of kubectl fleet's own.
//   - diff -o json: read-only (a server-side dry-run), but it needs a clone
//     of a fleet's repository, and its report is fluxdiff's, not the
//     model's; internal/cmd/diff_test.go checks it on the diff fleet.
//   - --watch -o json: a stream until Ctrl-C (watch_test.go checks it).
//   - version -o json: the build's, not a fleet's.
//   - list -o wide and -o name, and the text views: not JSON or YAML (the
//     tree, list, describe, drift and reconcile goldens have them).
//   - reconcile, suspend and resume without --dry-run: they write.
//   - On the flux fleet, everything but aws/team-a and aws/team-dead, as
//     when TestFrozen read the fleet after operate_test.go's tests, which
//     suspend and resume Kustomizations on aws and azure (azure's,
//     status-only, is left generations ahead of its status: stalled for
//     drift). scrubFrozen makes every commit COMMIT.
//   - On the reliability fleet, the master bulk (5,000 Kustomizations: 37
//     MB of goldens for the same object 5,000 times; faults_test.go counts
//     them). Its commands run with --timeout 5s: slow (a minute per round
//     trip) then always fails on the walk's deadline, "context deadline
//     exceeded", never on client-go's 10 s TLS handshake timeout, which
//     the default 10 s races with.
//
// The goldens are of the fleets as they start. A shared fleet's commands
// run once, in the first test to get the fleet, before any test can
// change it (sharedFleet.first, capture): TestFrozen compares what they
// printed whenever it runs, in whatever order the tests run, and again on
// a second run in one process (-count, make test-stress).

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// frozenFleet is what TestFrozen runs on one fleet of a spec.
type frozenFleet struct {
	// name is the spec's; fleet is its shared fleet of apiservers, for a
	// spec whose fleet needs real processes (controllers, the git server,
	// a watch cache off), and nil for one built in memory (the goldens,
	// written on apiservers, hold for both).
	name  string
	fleet *sharedFleet
	// tree and selection are the arguments of tree, and of the other
	// commands but describe, that select the clusters frozen (none: the
	// whole fleet); flags are given to every command.
	tree, selection, flags []string
	// walk is the exit code of tree, list and get clusters; drift that of
	// drift; action that of reconcile, suspend and resume --dry-run.
	walk, drift, action int
	// treeRead is true when tree's selection is read whole, where the
	// others' is not: tree exits 0.
	treeRead bool
	// capi is true when CAPI's controllers run on the fleet, and name
	// Machines and MachineSets (scrubFrozen).
	capi     bool
	describe []frozenDescribe
	// settle waits until the fleet's controllers are done (nil: nothing
	// to wait for).
	settle func(t *testing.T)
}

type frozenDescribe struct {
	path string
	code int
}

// frozenCase is one command of TestFrozen: its arguments and exit code.
type frozenCase struct {
	args []string
	code int
}

// cases are the commands f's goldens freeze.
func (f frozenFleet) cases() []frozenCase {
	args := func(cmd []string, sel []string, format string) []string {
		a := append(append(append([]string{}, cmd...), sel...), f.flags...)
		return append(a, "-o", format)
	}
	// A flux operation acts on the whole fleet with --all only, and its
	// timeout per cluster is --cluster-timeout.
	action := func(verb string) []string {
		a := append([]string{verb}, f.selection...)
		if len(f.selection) == 0 {
			a = append(a, "--all")
		}
		a = append(a, "--dry-run")
		for _, flag := range f.flags {
			if flag == "--timeout" {
				flag = "--cluster-timeout"
			}
			a = append(a, flag)
		}
		return append(a, "-o", "json")
	}
	tree := f.walk
	if f.treeRead {
		tree = 0
	}
	cs := []frozenCase{
		{args([]string{"tree"}, f.tree, "json"), tree},
		{args([]string{"tree"}, f.tree, "yaml"), tree},
		{args([]string{"tree", "--drift"}, f.tree, "json"), tree},
		{args([]string{"list"}, f.selection, "json"), f.walk},
		{args([]string{"list"}, f.selection, "yaml"), f.walk},
		{args([]string{"list", "--drift"}, f.selection, "json"), f.walk},
		{args([]string{"get", "clusters"}, f.selection, "json"), f.walk},
		{args([]string{"drift"}, f.selection, "json"), f.drift},
		{args([]string{"drift"}, f.selection, "yaml"), f.drift},
		{action("reconcile"), f.action},
		{action("suspend"), f.action},
		{action("resume"), f.action},
	}
	for _, d := range f.describe {
		cs = append(cs, frozenCase{args([]string{"describe", d.path}, nil, "json"), d.code})
	}
	return cs
}

// slug names a case's golden file: its words without dashes, "/" and ":"
// of a path as "_", but the fleet's own (--all, --env and --timeout with
// their values), and the output format as the extension: list --drift
// aws/team-a -o json is list-drift-aws_team-a.json.
func (c frozenCase) slug() string {
	var words []string
	ext := ""
	for i := 0; i < len(c.args); i++ {
		switch a := c.args[i]; a {
		case "-o":
			ext = c.args[i+1]
			i++
		case "--env", "--timeout", "--cluster-timeout":
			i++
		case "--all":
		default:
			words = append(words, strings.NewReplacer("/", "_", ":", "_").Replace(strings.TrimLeft(a, "-")))
		}
	}
	return strings.Join(words, "-") + "." + ext
}

var frozenFleets = []frozenFleet{
	{name: "demo", walk: 0, drift: 1, action: 0, describe: []frozenDescribe{{"aws", 0}, {"azure", 0}, {"aws/team-a", 0}, {"aws/team-c", 0}}},
	{name: "faults", walk: 3, drift: 1, action: 3, describe: []frozenDescribe{
		{"aws", 0}, {"no-secret", 3}, {"garbage", 3}, {"exec", 3}, {"tokenfile", 3}, {"forbidden", 3}, {"loop", 3},
		{"aws/tenants:team-a", 0}, {"aws/staging:team-a", 3},
	}},
	{
		name: "diff", fleet: diffFleet, walk: 0, drift: 1, action: 0, describe: []frozenDescribe{{"aws", 0}, {"aws/team-a", 0}},
		// tenants/team-a, which the repository puts on aws, is applied
		// after the fleet is ready, and retried until its tenant is up.
		settle: func(t *testing.T) { t.Helper(); diffCheckout(t) },
	},
	{
		name: "flux", fleet: fluxFleet, tree: []string{"aws/team-a"}, treeRead: true, selection: []string{"aws/team-a", "aws/team-dead"},
		walk: 3, drift: 1, action: 3, describe: []frozenDescribe{{"aws/team-a", 0}, {"aws/team-dead", 3}},
	},
	{name: "drift", walk: 3, drift: 1, action: 3, describe: []frozenDescribe{{"aws", 0}, {"azure", 0}, {"azure/team-a", 0}, {"aws/drifty", 0}, {"aws/gone", 3}}},
	{
		name: "reliability", flags: []string{"--timeout", "5s"},
		tree:      []string{"--env", "no-secrets", "--env", "no-helmreleases", "--env", "slow", "--env", "bare"},
		selection: []string{"--env", "no-secrets", "--env", "no-helmreleases", "--env", "slow", "--env", "bare"},
		walk:      3, drift: 1, action: 3, describe: []frozenDescribe{
			{"no-secrets", 3}, {"no-helmreleases", 3}, {"slow", 3}, {"bare", 0}, {"no-secrets/team-a", 3},
		},
	},
	{name: "hub", walk: 3, drift: 1, action: 3, describe: []frozenDescribe{
		{"aws", 0}, {"edge-1", 0}, {"prod-eu", 0}, {"lost", 3}, {"pending", 3}, {"no-apps", 3}, {"no-mcs", 3}, {"aws/team-a", 0},
	}},
	{
		name: "real", fleet: realFleet, capi: true, walk: 0, drift: 1, action: 0, describe: []frozenDescribe{{"aws", 0}, {"aws/edge-1", 0}, {"aws/team-a", 0}},
		settle: func(t *testing.T) { t.Helper(); realSettled(t, "", 0) },
	},
	{name: "scale", walk: 3, drift: 1, action: 3, describe: []frozenDescribe{
		{"master-0001", 0}, {"master-0002", 0}, {"master-0001/tenant-0001", 0}, {"master-0001/gone", 3},
	}},
	{name: "watch", fleet: watchFleet, walk: 0, drift: 1, action: 0, describe: []frozenDescribe{{"aws", 0}, {"aws/team-a", 0}, {"aws/team-b", 0}}},
}

// refold lays YAML out again from what it says: where a long string is
// folded depends on its length, and a scrub changes it (the sandbox's
// directory, of a random name, becomes SANDBOX). The YAML's content is
// compared; its bytes are those of its JSON, which is frozen byte for byte.
func refold(tb testing.TB, data []byte) []byte {
	tb.Helper()
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		tb.Fatalf("not YAML: %v\n%s", err, data)
	}
	out, err := yaml.JSONToYAML(j)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// pristine holds, by fleet name, the results of the frozen commands on a
// shared fleet as it started ([]result in the order of cases): taken by
// the first test to get the fleet (sharedFleet.first), before any test
// could change it, and compared by TestFrozen whenever it runs, or, for a
// fleet no test had got before TestFrozen and one will later in the run,
// by the test that gets it first (checkedAtCapture): so the fleet is not
// up from TestFrozen's turn to its own tests'.
var pristine, checkedAtCapture sync.Map

func init() {
	for _, ff := range frozenFleets {
		if ff.fleet != nil {
			ff.fleet.first = ff.capture
		}
	}
}

// capture runs f's commands on fleet, once its controllers are done, and
// keeps their results in pristine, the fleet's directory in them written
// SANDBOX (the fleet may be stopped when they are compared); and compares
// them, if TestFrozen left them to it.
func (f frozenFleet) capture(t *testing.T, fleet *sandbox.Fleet) {
	t.Helper()
	if f.settle != nil {
		f.settle(t)
	}
	cases := f.cases()
	results := make([]result, len(cases))
	for i, c := range cases {
		r := onApiservers(fleet).run(t, append(c.args, "--color", "never")...)
		r.stdout, r.stderr = strings.ReplaceAll(r.stdout, fleet.Dir, "SANDBOX"), strings.ReplaceAll(r.stderr, fleet.Dir, "SANDBOX")
		results[i] = r
	}
	pristine.Store(f.name, results)
	if _, left := checkedAtCapture.LoadAndDelete(f.name); left {
		t.Run("TestFrozen/"+f.name, func(t *testing.T) { f.check(t, results) })
	}
}

func TestFrozen(t *testing.T) {
	for _, ff := range frozenFleets {
		t.Run(ff.name, func(t *testing.T) {
			cases := ff.cases()
			var results []result
			if ff.fleet == nil {
				t.Parallel()
				f := inMemoryTarget(t, ff.name)
				// At once: on the reliability fleet each command waits out
				// its 5 s on slow.
				argLists := make([][]string, len(cases))
				for i, c := range cases {
					argLists[i] = append([]string{"--kubeconfig", f.fleet.Kubeconfig}, append(c.args, "--color", "never")...)
				}
				results = runAtOnceWith(t, f.deps, 2*time.Minute, argLists)
			} else {
				needFleets(t)
				v, ok := pristine.Load(ff.name)
				if !ok && ff.fleet.gotLater(t.Name()) {
					checkedAtCapture.Store(ff.name, true)
					t.Skipf("fleet %s is not up yet: the test that first gets it, later in this run, compares its frozen commands (as its subtest TestFrozen/%s)", ff.name, ff.name)
				}
				if !ok {
					ff.fleet.get(t)
					v, ok = pristine.Load(ff.name)
				}
				if !ok {
					t.Fatalf("the frozen commands did not all run on fleet %s as it started: the test that first got the fleet says why", ff.name)
				}
				results = v.([]result)
			}
			ff.check(t, results)
		})
	}
}

// check compares the results of f's commands with their goldens.
func (f frozenFleet) check(t *testing.T, results []result) {
	t.Helper()
	for i, c := range f.cases() {
		t.Run(c.slug(), func(t *testing.T) {
			r := results[i]
			if r.code != c.code {
				t.Errorf("kubectl fleet %s: exit %d, want %d; stderr:\n%s", strings.Join(c.args, " "), r.code, c.code, r.stderr)
			}
			out := scrubFrozen(t, f, r.stdout)
			if strings.HasSuffix(c.slug(), ".yaml") {
				golden.AssertFileAs(t, "frozen/"+f.name+"/"+c.slug(), out, refold)
				return
			}
			golden.AssertFile(t, "frozen/"+f.name+"/"+c.slug(), out)
		})
	}
}

var (
	// frozenStart is when this test binary started: a timestamp later
	// than a month before it was made by the clock of this run (the
	// sandbox's fixed instants, 2023-11-14T22:13:20Z and
	// 2026-01-01T00:00:00Z, are older, and stay).
	frozenStart = time.Now()
	rfc3339RE   = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	sha1RE      = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	// A flux operation's time, in its summary (a dry run's per object is 0).
	secondsRE = regexp.MustCompile(`("durationSeconds": |durationSeconds: )([0-9.e+-]+)`)
	// The names CAPI's controllers generate (generateName's five
	// characters) for the Machines of a KubeadmControlPlane, and for the
	// MachineSets of a MachineDeployment and their Machines.
	generatedRE = regexp.MustCompile(`(-control-plane|-md-\d+)((?:-[bcdfghjklmnpqrstvwxz2456789]{5})+)\b`)
)

// scrubFrozen is scrub, and what else varies between runs in the
// frozen goldens, each replaced by a word in its place, so that every
// field stays, with every value that does not vary:
//   - TIME: an RFC 3339 timestamp of this run's clock (a condition the
//     sandbox wrote relative to its start, or a real controller wrote);
//   - COMMIT: a commit of a sandbox git server: the fixture's commit on a
//     first run, a test's commit after operate_test.go's;
//   - SECONDS: a nonzero durationSeconds (an operation's wall time);
//   - -XXXXX: each five characters CAPI's controllers generate in a
//     Machine's or MachineSet's name, on a fleet where they run (the
//     sandbox's own names, e.g. team-c-md-0-7d9f8-0, stay).
func scrubFrozen(t *testing.T, ff frozenFleet, s string) []byte {
	t.Helper()
	s = string(scrub(s))
	s = rfc3339RE.ReplaceAllStringFunc(s, func(ts string) string {
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || at.Before(frozenStart.AddDate(0, -1, 0)) || at.After(time.Now().Add(time.Hour)) {
			return ts
		}
		return "TIME"
	})
	commits := sandboxCommits(t)
	s = sha1RE.ReplaceAllStringFunc(s, func(sha string) string {
		if commits[sha] {
			return "COMMIT"
		}
		return sha
	})
	s = secondsRE.ReplaceAllStringFunc(s, func(m string) string {
		if sub := secondsRE.FindStringSubmatch(m); sub[2] != "0" {
			return sub[1] + "SECONDS"
		}
		return m
	})
	if ff.capi {
		s = generatedRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := generatedRE.FindStringSubmatch(m)
			return sub[1] + strings.Repeat("-XXXXX", len(sub[2])/6)
		})
	}
	return []byte(s)
}

// sandboxCommits are the commits of every repository of the started
// fleets' git servers.
func sandboxCommits(t *testing.T) map[string]bool {
	t.Helper()
	commits := map[string]bool{}
	for _, sf := range sharedFleets {
		f := sf.started()
		if f == nil {
			continue
		}
		repos, err := filepath.Glob(filepath.Join(f.Dir, "git", "*.git"))
		if err != nil {
			t.Fatal(err)
		}
		for _, repo := range repos {
			out, err := exec.Command("git", "--git-dir", repo, "rev-list", "--all").Output()
			if err != nil {
				t.Fatalf("the commits of %s: %v", repo, err)
			}
			for _, sha := range strings.Fields(string(out)) {
				commits[sha] = true
			}
		}
	}
	return commits
}
