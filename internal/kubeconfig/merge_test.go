package kubeconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
)

func teamA(server string) Entry {
	return Entry{
		Name:    "fleet-aws-team-a",
		Cluster: &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: []byte("team-a-ca")},
		User:    &clientcmdapi.AuthInfo{ClientCertificateData: []byte("team-a-cert"), ClientKeyData: []byte("team-a-key")},
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "merge", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// isSubsequence reports whether every line of orig appears in out, in order:
// nothing of orig was changed or dropped.
func isSubsequence(orig, out []byte) bool {
	o, n := strings.SplitAfter(string(orig), "\n"), strings.SplitAfter(string(out), "\n")
	j := 0
	for _, line := range n {
		if j < len(o) && (line == o[j] || (j == len(o)-1 && strings.TrimSuffix(line, "\n") == o[j])) {
			j++
		}
	}
	return j == len(o)
}

func TestMergeSplicesTheEntriesIn(t *testing.T) {
	tests := []struct {
		fixture string
		// kept: the original's lines all survive; false where an empty list
		// ("clusters: []") is rewritten as a block list.
		kept bool
	}{
		{"kubectl-style", true},
		{"indented", true},
		{"no-newline", true},
		{"empty-lists", false},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			orig := fixture(t, tt.fixture)
			once, res, err := Merge(orig, teamA("https://10.0.0.1:6443"), false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Normalized || res.Replaced {
				t.Errorf("result = %+v, want an in-place addition", res)
			}
			golden.Assert(t, "merge/"+tt.fixture+".merged", once)
			if tt.kept && !isSubsequence(orig, once) {
				t.Errorf("the merge changed or dropped lines of the original:\n%s", once)
			}

			twice, res, err := Merge(once, teamA("https://10.0.0.1:6443"), false)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Replaced || res.Normalized || !bytes.Equal(once, twice) {
				t.Errorf("merging the same entry again: replaced %v, normalized %v, changed %v; want a byte-identical replacement",
					res.Replaced, res.Normalized, !bytes.Equal(once, twice))
			}

			moved, _, err := Merge(once, teamA("https://10.0.0.2:6443"), false)
			if err != nil {
				t.Fatal(err)
			}
			if tt.kept && !isSubsequence(orig, moved) {
				t.Errorf("replacing the entry touched other lines:\n%s", moved)
			}
			if bytes.Count(moved, []byte("name: fleet-aws-team-a")) != 3 || !bytes.Contains(moved, []byte("https://10.0.0.2:6443")) || bytes.Contains(moved, []byte("https://10.0.0.1:6443")) {
				t.Errorf("replacement did not replace exactly the three entries:\n%s", moved)
			}
		})
	}
}

func TestMergeSetsTheCurrentContext(t *testing.T) {
	orig := fixture(t, "kubectl-style")
	out, _, err := Merge(orig, teamA("https://10.0.0.1:6443"), true)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(out)
	if err != nil || cfg.CurrentContext != "fleet-aws-team-a" {
		t.Fatalf("current context = %v (%v), want fleet-aws-team-a", cfg.CurrentContext, err)
	}
	withoutCurrent := strings.Replace(string(orig), "current-context: prod\n", "", 1)
	if !isSubsequence([]byte(withoutCurrent), out) {
		t.Errorf("setting the current context changed other lines:\n%s", out)
	}
}

func TestMergeRewritesFlowStyleWhole(t *testing.T) {
	orig := fixture(t, "flow")
	out, res, err := Merge(orig, teamA("https://10.0.0.1:6443"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Normalized {
		t.Error("a flow-style file cannot be spliced; want Normalized")
	}
	before, _ := clientcmd.Load(orig)
	after, err := clientcmd.Load(out)
	if err != nil || after.Clusters["a"].Server != before.Clusters["a"].Server || after.AuthInfos["a"].Token != "t" ||
		after.CurrentContext != "a" || after.Contexts["fleet-aws-team-a"] == nil {
		t.Errorf("normalized rewrite lost something: %+v, %v", after, err)
	}
}

func TestMergeLeavesAnInvalidFileAlone(t *testing.T) {
	if _, _, err := Merge([]byte("clusters: [\n"), teamA("https://x"), false); err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Errorf("err = %v, want the file left alone", err)
	}
}

func TestMergeFileKeepsModeFollowsLinksAndLocks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "real-config")
	link := filepath.Join(dir, "config")
	if err := os.WriteFile(file, fixture(t, "kubectl-style"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	res, err := MergeFile(link, teamA("https://10.0.0.1:6443"), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != file {
		t.Errorf("wrote %s, want the link's target %s", res.Path, file)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a file (%v)", err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v (%v), want 0640 kept", fi.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left behind %v, want only the file and the link (no lock, no temporary file)", entries)
	}

	if err := os.WriteFile(file+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	_, err = mergeFile(link, teamA("https://10.0.0.2:6443"), false, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "is locked by "+file+".lock") {
		t.Errorf("err = %v, want the lock reported", err)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Error("the file changed while locked")
	}
}

func TestMergeFileCreatesANewPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".kube", "config")
	if _, err := MergeFile(path, teamA("https://10.0.0.1:6443"), true); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file mode = %v (%v), want 0600", fi, err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil || cfg.CurrentContext != "fleet-aws-team-a" || string(cfg.AuthInfos["fleet-aws-team-a"].ClientKeyData) != "team-a-key" {
		t.Errorf("new file = %+v, %v", cfg, err)
	}
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock left behind: %v", err)
	}
}

// A kubeconfig that is a dangling symlink is created where the link
// points; the link stays a link.
func TestMergeIntoDanglingSymlinkCreatesItsTarget(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "config")
	if err := os.Symlink("dotfiles/kubeconfig", link); err != nil {
		t.Fatal(err)
	}
	res, err := MergeFile(link, teamA("https://10.0.0.1:6443"), false)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "dotfiles", "kubeconfig")
	if res.Path != want {
		t.Errorf("merged into %s, want %s", res.Path, want)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v %v", info.Mode(), err)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("the link's target was not created: %v", err)
	}
}
