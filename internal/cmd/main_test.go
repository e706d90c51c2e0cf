package cmd_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The fleets of real apiservers the end-to-end tests of this package
// share, for what an in-memory fleet cannot show (real controllers, TLS
// and the kubeconfig policy end to end, request logs, watch streams,
// kubectl run against a fleet). Each is started by the first test that
// gets it (fleet.get), or a little ahead of it by TestMain, and stopped
// once no test to come names it (fleetUse): a fleet's apiservers, idle,
// still take 2 to 3 % of a core each, and 11 fleets up from the first
// test to the last kept two cores busy doing nothing. A spec that no test
// needs on apiservers has none: the drift fleet's tests all run in memory
// (its frozen JSON, written on apiservers, shows the two agree).
var (
	demoFleet   = newSharedFleet("demo")
	faultsFleet = newSharedFleet("faults")
	// diffFleet runs the real Flux controllers on aws, which applies
	// testdata/gitrepos/diff-fleet to itself and, through spec.kubeConfig,
	// to aws/team-a.
	diffFleet = newSharedFleet("diff")
	// fluxFleet runs the real Flux controllers on aws and aws/team-a.
	fluxFleet = newSharedFleet("flux")
	// reliabilityFleet is the fault suite's: RBAC that hides Secrets or
	// HelmReleases, a slow cluster, 5,000 Flux objects, no CRDs.
	reliabilityFleet = newSharedFleet("reliability")
	// hubFleet is seed 004's hub: clusters reached by Argo CD cluster
	// Secrets, one by CAPI too, and each refused Argo CD credential.
	hubFleet = newSharedFleet("hub")
	// realFleet is seed 002 on the real controllers: CAPI's on mom and on
	// aws, which CAPI provisions; Flux's on aws, whose helm-controller
	// installs a HelmRelease per tenant that CAPI provisions in memory.
	realFleet = newSharedFleet("real")
	// scaleFleet has counted clusters on shared apiservers behind latency
	// proxies: the walk engine's fleet.
	scaleFleet = newSharedFleet("scale")
	// watchFleet is --watch's: clusters a test cuts off and brings back,
	// one without a watch cache.
	watchFleet = newSharedFleet("watch")
	// credentialsFleet has clusters reached as CAPI providers write their
	// kubeconfigs: short-lived tokens, user kubeconfigs that exec
	// bare-named plugins, a private server behind proxies, an expired
	// token and an in-cluster address.
	credentialsFleet = newSharedFleet("credentials")
	// inventoriesFleet is a hub of every inventory: CAPI, OCM,
	// ClusterProfiles, Sveltos and HyperShift.
	inventoriesFleet = newSharedFleet("inventories")
	// sharedFleets are every shared fleet; TestMain starts them ahead of
	// the tests in the order the tests first need them (fleetUse).
	sharedFleets = []*sharedFleet{demoFleet, faultsFleet, credentialsFleet, inventoriesFleet, diffFleet, fluxFleet, reliabilityFleet, hubFleet, realFleet, watchFleet, scaleFleet}
)

// A sharedFleet is a sandbox fleet of testdata/fleets/NAME.yaml of real
// apiservers: started when a test first needs it (get) or ahead of it
// (start), and stopped once no test to come names it (reached).
type sharedFleet struct {
	name string
	run  *fleetRun // the fleet's start; nil before it and after a stop; under fleets.mu
	done bool      // no test to come names it; under fleets.mu

	// first, when set, reads the fleet as it started, before any test
	// has it: get runs it once, in the first test to get the fleet, and
	// every other get waits for it (TestFrozen's goldens are of the fleet
	// as it starts, whichever test runs first).
	first     func(t *testing.T, f *sandbox.Fleet)
	firstOnce sync.Once
	firstBy   atomic.Pointer[testing.T] // the test running first, whose own gets go on
}

// A fleetRun is one start of a shared fleet.
type fleetRun struct {
	ready chan struct{} // closed once started or failed
	fleet *sandbox.Fleet
	err   error
}

func newSharedFleet(name string) *sharedFleet { return &sharedFleet{name: name} }

// fleets is what the shared fleets do: which test has begun, what the
// package's tests need (use), and the starts and stops under way.
var fleets = struct {
	mu   sync.Mutex
	cond *sync.Cond // broadcast when busy, holds or a fleet's run change
	use  fleetUse   // nil maps when the tests' source could not be read: nothing stops early
	// reached is the position (fleetUse.order) of the latest top-level
	// test to get a fleet: every test before it has ended.
	reached int
	// busy counts the starts and stops under way; holds the tests that
	// need none to begin (holdFleets).
	busy, holds int
}{reached: -1}

func init() { fleets.cond = sync.NewCond(&fleets.mu) }

// fleetStarts holds a slot per fleet starting: two at a time, as every
// apiserver at once makes two cores thrash. maxAhead is how many fleets
// may be up when TestMain starts one ahead of its first test.
var fleetStarts = make(chan struct{}, 2)

const maxAhead = 4

// start begins the fleet's start in the background unless it has begun;
// held says the caller holds a slot of fleetStarts, which the start then
// releases. It reports whether this call began it. Called with fleets.mu
// held.
func (s *sharedFleet) start(held bool) bool {
	if s.run != nil {
		return false
	}
	r := &fleetRun{ready: make(chan struct{})}
	s.run = r
	fleets.busy++
	go func() {
		defer func() {
			close(r.ready)
			notBusy()
		}()
		if !held {
			fleetStarts <- struct{}{}
		}
		defer func() { <-fleetStarts }()
		root, err := sandbox.CheckoutRoot()
		if err != nil {
			r.err = err
			return
		}
		// The fleets' own requests log nothing: a test that runs a
		// command with -v=10 in this process turns klog's verbosity up
		// for the whole process while it runs, and a fleet starting
		// beside it would log every body it sends.
		ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), logr.Discard()), 10*time.Minute)
		defer cancel()
		// A start that failed is tried once more, from nothing (a failed
		// start stops what it started): on a loaded machine an apiserver
		// can miss its own 60 s on a CRD's create, and every test of the
		// fleet would fail with it.
		for try := 1; ; try++ {
			r.fleet, r.err = sandbox.StartFile(ctx, root+"/testdata/fleets/"+s.name+".yaml", "")
			if r.err == nil || try == 2 || ctx.Err() != nil {
				break
			}
			fmt.Fprintf(os.Stderr, "fleet %s did not start (%v); starting it again\n", s.name, r.err)
		}
	}()
	return true
}

// stop stops the fleet in the background once its start has ended.
// Called with fleets.mu held.
func (s *sharedFleet) stop() {
	r := s.run
	if r == nil {
		return
	}
	s.run = nil
	fleets.busy++
	go func() {
		<-r.ready
		if r.fleet != nil {
			if err := r.fleet.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "warning: %v\n", err)
			}
		}
		notBusy()
	}()
}

// notBusy counts a start or stop as ended.
func notBusy() {
	fleets.mu.Lock()
	fleets.busy--
	fleets.cond.Broadcast()
	fleets.mu.Unlock()
}

// get is the started fleet: it starts it if no test has yet, waits for
// its start, and fails the test if the fleet could not start. Under -short
// it skips the test. A fleet stopped because no test to come names it
// (fleetUse read the source wrong) is started again, and says so.
func (s *sharedFleet) get(tb testing.TB) *sandbox.Fleet {
	tb.Helper()
	needFleets(tb)
	reached(tb.Name())
	fleets.mu.Lock()
	if s.done {
		tb.Logf("fleet %s was stopped as no test to come names it (fleetUse), and starts again for %s", s.name, tb.Name())
		s.done = false
	}
	s.start(false)
	r := s.run
	fleets.cond.Broadcast()
	fleets.mu.Unlock()
	<-r.ready
	if r.err != nil {
		tb.Fatalf("fleet %s: %v", s.name, r.err)
	}
	if t, _ := tb.(*testing.T); s.first != nil && (t == nil || s.firstBy.Load() != t) {
		s.firstOnce.Do(func() {
			if t == nil {
				tb.Fatalf("fleet %s is first read by a test (*testing.T), not %T", s.name, tb)
			}
			s.firstBy.Store(t)
			defer s.firstBy.Store(nil)
			s.first(t, r.fleet)
		})
	}
	return r.fleet
}

// gotLater says a test after test's (a test's name, of a subtest's too)
// in this whole run (not -run) names the fleet (fleetUse).
func (s *sharedFleet) gotLater(test string) bool {
	if !wholeRun() {
		return false
	}
	fleets.mu.Lock()
	defer fleets.mu.Unlock()
	pos, ok := position(test)
	return ok && fleets.use.last[s.name] > pos
}

// wholeRun says no -run chose the tests.
func wholeRun() bool {
	f := flag.Lookup("test.run")
	return f == nil || f.Value.String() == ""
}

// position is fleetUse's position of test's top-level test. Called with
// fleets.mu held.
func position(test string) (int, bool) {
	name, _, _ := strings.Cut(test, "/")
	pos, ok := fleets.use.order[name]
	return pos, ok
}

// reached notes that test's top-level test has begun, and stops every
// fleet no test from it on names.
func reached(test string) {
	fleets.mu.Lock()
	defer fleets.mu.Unlock()
	pos, ok := position(test)
	if !ok || pos <= fleets.reached {
		return
	}
	fleets.reached = pos
	for _, s := range sharedFleets {
		if last, ok := fleets.use.last[s.name]; ok && last < pos && !s.done {
			s.done = true
			s.stop()
		}
	}
	fleets.cond.Broadcast()
}

// holdFleets waits until no shared fleet is starting or stopping, and
// starts or stops none ahead of the tests until the test ends: a start
// runs goroutines, which a test that counts the process's goroutines must
// not see.
func holdFleets(t *testing.T) {
	t.Helper()
	fleets.mu.Lock()
	fleets.holds++
	for fleets.busy > 0 {
		fleets.cond.Wait()
	}
	fleets.mu.Unlock()
	t.Cleanup(func() {
		fleets.mu.Lock()
		fleets.holds--
		fleets.cond.Broadcast()
		fleets.mu.Unlock()
	})
}

// started is the fleet if it is up, nil if not (yet, or any more).
func (s *sharedFleet) started() *sandbox.Fleet {
	fleets.mu.Lock()
	r := s.run
	fleets.mu.Unlock()
	if r == nil {
		return nil
	}
	select {
	case <-r.ready:
		return r.fleet
	default:
		return nil
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	var code int
	if testing.Short() {
		code = m.Run()
	} else {
		ctrllog.SetLogger(logr.Discard())
		code = runWithFleets(m)
	}
	stopInMemory()
	removePlugin()
	os.Exit(code)
}

// runWithFleets runs the tests, starting the shared fleets ahead of them
// in a whole run (with -run, a fleet starts when a test first needs it),
// stopping each once no test to come names it, and every fleet still up
// at the end.
func runWithFleets(m *testing.M) int {
	use, err := fleetUseHere()
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: the shared fleets stay up to the end: %v\n", err)
	}
	if f := flag.Lookup("test.shuffle"); f != nil && f.Value.String() != "off" {
		// In another order, fleetUse's order says nothing: every fleet
		// stays up once started, and none starts ahead.
		use, err = fleetUse{}, errors.New("-shuffle")
	}
	fleets.mu.Lock()
	fleets.use = use
	fleets.mu.Unlock()
	ahead, stopAhead := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if err == nil && wholeRun() {
		wg.Go(func() { startAhead(ahead, use) })
	}
	defer func() {
		stopAhead()
		fleets.mu.Lock()
		fleets.cond.Broadcast()
		fleets.mu.Unlock()
		wg.Wait()
		if pluginPath != "" {
			_ = os.RemoveAll(filepath.Dir(pluginPath))
		}
		fleets.mu.Lock()
		for _, s := range sharedFleets {
			s.stop()
		}
		for fleets.busy > 0 {
			fleets.cond.Wait()
		}
		fleets.mu.Unlock()
	}()
	code := m.Run()
	checkedAtCapture.Range(func(name, _ any) bool {
		fmt.Fprintf(os.Stderr, "FAIL: TestFrozen left fleet %s's frozen commands to the first test to get it later, and none did\n", name)
		code = max(code, 1)
		return true
	})
	return code
}

// startAhead starts the shared fleets ahead of their first test, in the
// order the tests first need them, two at a time, while fewer than
// maxAhead are up and no test holds the fleets still; a fleet no test to
// come names is not started.
func startAhead(ctx context.Context, use fleetUse) {
	order := slices.Clone(sharedFleets)
	slices.SortStableFunc(order, func(a, b *sharedFleet) int { return cmp.Compare(use.first[a.name], use.first[b.name]) })
	for _, s := range order {
		if _, used := use.first[s.name]; !used {
			continue
		}
		fleets.mu.Lock()
		for ctx.Err() == nil && (fleets.holds > 0 || up() >= maxAhead) && s.run == nil && !s.done {
			fleets.cond.Wait()
		}
		fleets.mu.Unlock()
		select {
		case fleetStarts <- struct{}{}:
		case <-ctx.Done():
			return
		}
		fleets.mu.Lock()
		if ctx.Err() != nil || s.done || fleets.holds > 0 || !s.start(true) {
			<-fleetStarts
		}
		fleets.mu.Unlock()
	}
}

// up counts the shared fleets started and not stopped. Called with
// fleets.mu held.
func up() int {
	n := 0
	for _, s := range sharedFleets {
		if s.run != nil {
			n++
		}
	}
	return n
}

// needFleets skips a test under -short, where TestMain starts no apiserver.
func needFleets(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("end-to-end test: needs the sandbox fleets (not with -short)")
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// run executes kubectl fleet in-process, as main does, with args.
func run(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, cmd.Deps{}, args...)
}

// runWith executes kubectl fleet in-process with deps and args.
func runWith(t *testing.T, deps cmd.Deps, args ...string) result {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := cmd.Execute(context.Background(), streams, args, deps)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// decode reads what a command printed with -o json as a T, or fails the
// test showing the output.
func decode[T any](t *testing.T, r result) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("-o json printed no %T (exit %d): %v\n%s\nstderr: %s", v, r.code, err, r.stdout, r.stderr)
	}
	return v
}

// onFleet runs kubectl fleet against the root cluster of f.
func onFleet(t *testing.T, f *sandbox.Fleet, args ...string) result {
	t.Helper()
	return run(t, append([]string{"--kubeconfig", f.Kubeconfig}, args...)...)
}

// memFleets are the in-memory fleets of testdata/fleets/NAME.yaml
// (sandbox.StartInMemory), by name: each built once, by the first test
// that needs it, and only read by the tests, so that they may run in
// parallel and in any order.
var memFleets = struct {
	sync.Mutex
	byName map[string]*memFleet
}{byName: map[string]*memFleet{}}

type memFleet struct {
	once  sync.Once
	fleet *sandbox.Fleet
	err   error
}

// inMemory is the in-memory fleet of spec name; it needs no apiserver and
// runs under -short.
func inMemory(tb testing.TB, name string) *sandbox.Fleet {
	tb.Helper()
	memFleets.Lock()
	m := memFleets.byName[name]
	if m == nil {
		m = &memFleet{}
		memFleets.byName[name] = m
	}
	memFleets.Unlock()
	m.once.Do(func() {
		root, err := sandbox.CheckoutRoot()
		if err != nil {
			m.err = err
			return
		}
		f, err := sandbox.StartInMemoryFile(context.Background(), root+"/testdata/fleets/"+name+".yaml", "")
		memFleets.Lock() // scrub reads the fleets under the lock
		m.fleet, m.err = f, err
		memFleets.Unlock()
	})
	if m.err != nil {
		tb.Fatalf("in-memory fleet %s: %v", name, m.err)
	}
	return m.fleet
}

// inMemoryTarget is the in-memory fleet of spec name (inMemory) as a
// target, for a test that only reads it.
func inMemoryTarget(tb testing.TB, name string) target {
	tb.Helper()
	f := inMemory(tb, name)
	return target{name: "inmemory", fleet: f, deps: cmd.Deps{Dial: f.Dial}}
}

// ownInMemory is a new in-memory fleet of spec name for test alone, which
// may write to it; removed when test ends.
func ownInMemory(t *testing.T, name string) target {
	t.Helper()
	root, err := sandbox.CheckoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := sandbox.StartInMemoryFile(t.Context(), root+"/testdata/fleets/"+name+".yaml", t.TempDir())
	if err != nil {
		t.Fatalf("in-memory fleet %s: %v", name, err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	return target{name: "inmemory", fleet: f, deps: cmd.Deps{Dial: f.Dial}}
}

// stopInMemory removes the files of the in-memory fleets.
func stopInMemory() {
	memFleets.Lock()
	defer memFleets.Unlock()
	for name, m := range memFleets.byName {
		if m.fleet != nil {
			if err := m.fleet.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "warning: in-memory fleet %s: %v\n", name, err)
			}
		}
		delete(memFleets.byName, name)
	}
}

// target is a fleet a test runs commands against, in memory or on
// apiservers: what onBoth and its kin return, one subtest each. begin
// readies it in its subtest.
type target struct {
	// name names the subtest: inmemory or apiservers.
	name  string
	fleet *sandbox.Fleet
	deps  cmd.Deps

	spec     string // the fleet's spec, for begin
	parallel bool   // the subtest runs in parallel
	own      bool   // a fleet of the subtest's own (it writes)
	shared   bool   // the spec's shared fleet of apiservers
}

// onApiservers is the target of a fleet of apiservers.
func onApiservers(f *sandbox.Fleet) target { return target{name: "apiservers", fleet: f} }

// onBoth are the targets of spec name a test that only reads runs
// against, each as a subtest (t.Run(f.name, …), then f.begin): its
// in-memory fleet, in parallel with other tests, and, without -short, its
// apiservers where the spec has a shared fleet (sharedFleets). What the
// test asserts, a golden file included, holds for both: that is what
// makes a spec mean the same thing to both.
func onBoth(name string) []target { return targets(name, true, false) }

// onBothInTurn is onBoth for a test that sets the process's environment
// (t.Setenv), which must not run in parallel with others.
func onBothInTurn(name string) []target { return targets(name, false, false) }

// onBothWriting is onBoth for a test that writes to the fleet: in memory
// it gets a fleet of its own (ownInMemory); on apiservers, the shared
// one, whose state it must restore.
func onBothWriting(name string) []target { return targets(name, true, true) }

func targets(name string, parallel, own bool) []target {
	out := []target{{name: "inmemory", spec: name, parallel: parallel, own: own}}
	if !testing.Short() && sharedNamed(name) != nil {
		out = append(out, target{name: "apiservers", spec: name, shared: true})
	}
	return out
}

// begin readies the target in its subtest t: waits for or builds its
// fleet, and runs t in parallel where the target says.
func (tg target) begin(t *testing.T) target {
	t.Helper()
	reached(t.Name())
	if tg.parallel {
		t.Parallel()
	}
	switch {
	case tg.shared:
		tg.fleet = sharedByName(t, tg.spec).get(t)
	case tg.own:
		own := ownInMemory(t, tg.spec)
		tg.fleet, tg.deps = own.fleet, own.deps
	case tg.fleet == nil:
		tg.fleet = inMemory(t, tg.spec)
		tg.deps = cmd.Deps{Dial: tg.fleet.Dial}
	}
	return tg
}

// run executes kubectl fleet against the root cluster of the target.
func (tg target) run(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, tg.deps, append([]string{"--kubeconfig", tg.fleet.Kubeconfig}, args...)...)
}

// sharedByName is the shared fleet of spec name.
func sharedByName(tb testing.TB, name string) *sharedFleet {
	tb.Helper()
	s := sharedNamed(name)
	if s == nil {
		tb.Fatalf("no shared fleet %s", name)
	}
	return s
}

// sharedNamed is the shared fleet of spec name, nil if the spec has none.
func sharedNamed(name string) *sharedFleet {
	for _, s := range sharedFleets {
		if s.name == name {
			return s
		}
	}
	return nil
}

var (
	portRE     = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	durationRE = regexp.MustCompile(`(?m) in [0-9.]+(ns|µs|ms|s)$`)
)

// scrub replaces what changes from run to run: the sandbox's loopback ports
// and directories.
func scrub(s string) []byte {
	for _, sf := range sharedFleets {
		if f := sf.started(); f != nil {
			s = strings.ReplaceAll(s, f.Dir, "SANDBOX")
		}
	}
	memFleets.Lock()
	for _, m := range memFleets.byName {
		if m.fleet != nil {
			s = strings.ReplaceAll(s, m.fleet.Dir, "SANDBOX")
		}
	}
	memFleets.Unlock()
	s = durationRE.ReplaceAllString(s, " in DURATION")
	return []byte(portRE.ReplaceAllString(s, "127.0.0.1:PORT"))
}

// writeKubeconfig writes a kubeconfig whose one context, "nowhere", points at server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := t.TempDir() + "/kubeconfig"
	data := "apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n" +
		"clusters: [{name: nowhere, cluster: {server: " + server + "}}]\n" +
		"users: [{name: nobody, user: {token: t}}]\n" +
		"contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runWithin runs kubectl fleet as run does, and fails if it is still
// running after limit (the command goes on in the background).
func runWithin(t *testing.T, limit time.Duration, args ...string) (result, error) {
	t.Helper()
	return runWithinWith(t, cmd.Deps{}, limit, args...)
}

// runWithinWith is runWithin, reaching clusters with deps.
func runWithinWith(t *testing.T, deps cmd.Deps, limit time.Duration, args ...string) (result, error) {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runWith(t, deps, args...) }()
	select {
	case r := <-done:
		return r, nil
	case <-time.After(limit):
		return result{}, fmt.Errorf("%v is still running after %s", args, limit)
	}
}

// runAtOnce runs every command of argLists at once, each bounded by limit,
// and returns their results in order. A suite whose commands each wait out
// a timeout runs them so rather than as parallel subtests: go test runs at
// most GOMAXPROCS parallel subtests at a time, which on two cores made a
// minute of twelve 15-second waits.
func runAtOnce(t *testing.T, limit time.Duration, argLists [][]string) []result {
	t.Helper()
	return runAtOnceWith(t, cmd.Deps{}, limit, argLists)
}

// runAtOnceWith is runAtOnce, reaching clusters with deps.
func runAtOnceWith(t *testing.T, deps cmd.Deps, limit time.Duration, argLists [][]string) []result {
	t.Helper()
	results := make([]result, len(argLists))
	errs := make([]error, len(argLists))
	var wg sync.WaitGroup
	for i, args := range argLists {
		wg.Go(func() { results[i], errs[i] = runWithinWith(t, deps, limit, args...) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return results
}
