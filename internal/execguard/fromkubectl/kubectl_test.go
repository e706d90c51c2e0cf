package fromkubectl

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/logs"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/execguard"
)

var update = flag.Bool("update", false, "rewrite ../kubectl.json from k8s.io/kubectl")

// kubectlTree builds kubectl's command tree as kubectl's main does:
// NewKubectlCommand, the logging flags component-base/cli adds, cobra's
// help command and help flags. The logging flags get values of their own:
// klog's are the process's.
func kubectlTree() *cobra.Command {
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	root := kubectlcmd.NewKubectlCommand(kubectlcmd.KubectlOptions{IOStreams: streams})
	klog := pflag.NewFlagSet("klog", pflag.ContinueOnError)
	logs.AddFlags(klog)
	klog.VisitAll(func(f *pflag.Flag) {
		if root.PersistentFlags().Lookup(f.Name) == nil {
			root.PersistentFlags().AddFlag(execguard.StandIn(f))
		}
	})
	root.InitDefaultHelpCmd()
	walk(root, func(c *cobra.Command) { c.InitDefaultHelpFlag() })
	return root
}

func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// kubectlVersion is the version of k8s.io/kubectl go.mod requires, as a
// kubectl release: v0.36.4 is 1.36.4.
func kubectlVersion(t *testing.T) string {
	t.Helper()
	mod, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubectl v0\.(\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/kubectl")
	}
	return "1." + string(m[1])
}

// The copy of kubectl's tree the plugin carries is kubectl's tree, as the
// required k8s.io/kubectl builds it.
func TestCopyIsKubectlsTree(t *testing.T) {
	tree := execguard.Tree{Kubectl: kubectlVersion(t), Root: execguard.Dump(kubectlTree())}
	got, err := json.MarshalIndent(tree, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const file = "../kubectl.json"
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the tree of k8s.io/kubectl v0.%s: run go test ./internal/execguard/fromkubectl -update, and read the change: a new command or flag may need a decision in internal/execguard/reads.go", file, strings.TrimPrefix(tree.Kubectl, "1."))
	}
}

// Each command line of the guard's table, run by kubectl's own Execute on
// its own tree (every command and hook replaced by a recorder): what
// kubectl runs is what the guard resolved, and a target flag the guard
// did not see is never set.
func TestTableAsKubectlRunsIt(t *testing.T) {
	data, err := os.ReadFile("../testdata/lines.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var lines []struct {
		Args    []string `json:"args"`
		Command string   `json:"command"`
		Read    bool     `json:"read"`
		Target  string   `json:"target"`
		Note    string   `json:"note"`
	}
	if err := yaml.UnmarshalStrict(data, &lines); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		r := kubectlRuns(l.Args)
		if r.Ran != "" && r.Ran != l.Command {
			t.Errorf("%q: kubectl runs %q; the table says %q", l.Args, r.Ran, l.Command)
		}
		if len(r.Targets) > 0 && l.Target == "" {
			t.Errorf("%q: kubectl sets %v; the table names no target flag", l.Args, r.Targets)
		}
	}
}

// kubectlRuns executes args on kubectl's tree, after the --kubeconfig
// kubectl fleet gives, with every command's run and hooks replaced by a
// recorder.
func kubectlRuns(args []string) *execguard.Recorder {
	root := kubectlTree()
	r := &execguard.Recorder{Kubeconfig: "/fleet"}
	walk(root, func(c *cobra.Command) {
		runnable := c.Runnable()
		c.PersistentPreRun, c.PersistentPreRunE, c.PreRun, c.PreRunE = nil, nil, nil, nil
		c.PostRun, c.PostRunE, c.PersistentPostRun, c.PersistentPostRunE = nil, nil, nil, nil
		c.Run, c.RunE = nil, nil
		if runnable {
			c.RunE = r.Record
		}
	})
	root.SetArgs(append([]string{"--kubeconfig", r.Kubeconfig}, args...))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SilenceErrors, root.SilenceUsage = true, true
	_ = root.Execute()
	return r
}
