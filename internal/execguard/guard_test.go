package execguard

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the list of reads in docs/exec.md")

// line is one command line of testdata/lines.yaml and how kubectl resolves it.
type line struct {
	Args    []string `json:"args"`
	Command string   `json:"command"`
	Read    bool     `json:"read"`
	Target  string   `json:"target"`
	Note    string   `json:"note"`
}

func readLines(tb testing.TB) []line {
	tb.Helper()
	data, err := os.ReadFile("testdata/lines.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var lines []line
	if err := yaml.UnmarshalStrict(data, &lines); err != nil {
		tb.Fatal(err)
	}
	return lines
}

func newGuard(tb testing.TB) *Guard {
	tb.Helper()
	g, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// Every command line of the table resolves to the command it names, with
// its verdict and target flag; one that is not a read says why.
func TestJudge(t *testing.T) {
	g := newGuard(t)
	lines := readLines(t)
	if len(lines) < 40 {
		t.Errorf("the table has %d command lines; it keeps at least 40", len(lines))
	}
	for _, l := range lines {
		v := g.Judge(l.Args)
		if v.Command != l.Command || v.Read != l.Read || v.Target != l.Target {
			t.Errorf("%q: command %q, read %v, target %q; want %q, %v, %q (%s)", l.Args, v.Command, v.Read, v.Target, l.Command, l.Read, l.Target, v.Why)
		}
		if v.Read != (v.Why == "") {
			t.Errorf("%q: read %v with why %q", l.Args, v.Read, v.Why)
		}
		if v.Command != "" && !v.Read && !strings.Contains(v.Why, "kubectl "+v.Command) {
			t.Errorf("%q: %q does not name the command as kubectl resolved it, %q", l.Args, v.Why, v.Command)
		}
	}
}

// Every command the lists name is a command of kubectl's tree, under that
// name: a misspelt read would never match.
func TestListsNameKubectlCommands(t *testing.T) {
	g := newGuard(t)
	var names []string
	for name := range reads {
		names = append(names, name)
	}
	for name := range listener {
		names = append(names, name)
	}
	for name := range inside {
		names = append(names, name)
	}
	for _, name := range names {
		found, rest, err := g.root.Find(strings.Fields(name))
		if err != nil || len(rest) != 0 || strings.TrimPrefix(found.CommandPath(), "kubectl ") != name {
			t.Errorf("%q is not a command of kubectl %s", name, g.Kubectl())
		}
	}
}

// Each read is named in docs/exec.md with why, between the markers.
func TestDocsListTheReads(t *testing.T) {
	const file = "../../docs/exec.md"
	const begin, end = "<!-- reads: go test ./internal/execguard -run TestDocsListTheReads -update -->\n", "<!-- end of reads -->\n"
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := bytes.Cut(doc, []byte(begin))
	_, after, ok2 := bytes.Cut(rest, []byte(end))
	if !ok1 || !ok2 {
		t.Fatalf("%s has no list of reads between %q and %q", file, begin, end)
	}
	var names []string
	for name := range reads {
		names = append(names, name)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("| command | why it only reads |\n| --- | --- |\n")
	for _, name := range names {
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, reads[name])
	}
	want := slices.Concat(before, []byte(begin), b.Bytes(), []byte(end), after)
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("%s does not list the reads of reads.go: run go test ./internal/execguard -run TestDocsListTheReads -update", file)
	}
}

// kubectlRuns executes args, after the --kubeconfig kubectl fleet gives,
// with cobra's own Execute on a fresh copy of kubectl's tree whose
// commands record that they ran.
func kubectlRuns(tree *Tree, args []string) *Recorder {
	r := &Recorder{Kubeconfig: "/fleet"}
	root := Build(tree.Root, r.Record)
	root.SetArgs(append([]string{"--kubeconfig", r.Kubeconfig}, args...))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	_ = root.Execute()
	return r
}

// Whatever the command line, kubectl fleet lets it run without
// --allow-write only when the command kubectl's own Execute runs for it is
// the read the guard resolved, with no flag that chooses the cluster. The
// seeds are the table's lines; a fuzzed input is words split at NUL.
func FuzzExecVerb(f *testing.F) {
	for _, l := range readLines(f) {
		f.Add(strings.Join(l.Args, "\x00"))
	}
	g := newGuard(f)
	tree, err := loadTree()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) || len(in) > 512 {
			return
		}
		args := strings.Split(in, "\x00")
		v := g.Judge(args)
		if !v.Read || v.Target != "" {
			return // refused without --allow-write
		}
		if reads[v.Command] == "" {
			t.Fatalf("%q: allowed as %q, which is no read", args, v.Command)
		}
		r := kubectlRuns(tree, args)
		if r.Ran != "" && r.Ran != v.Command {
			t.Fatalf("%q: allowed as %q, but kubectl runs %q", args, v.Command, r.Ran)
		}
		if len(r.Targets) > 0 {
			t.Fatalf("%q: allowed, but kubectl runs it with %v", args, r.Targets)
		}
	})
}

// What the guard adds to each `kubectl fleet exec`: kubectl's tree built
// from the copy, and one command line judged (make bench).
func BenchmarkGuard(b *testing.B) {
	args := []string{"--cache-dir", "/tmp/kc", "-n", "kube-system", "get", "pods", "-o", "wide"}
	for b.Loop() {
		g, err := New()
		if err != nil {
			b.Fatal(err)
		}
		if v := g.Judge(args); !v.Read {
			b.Fatal(v.Why)
		}
	}
}
