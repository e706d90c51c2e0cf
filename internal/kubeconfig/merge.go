package kubeconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	sigsyaml "sigs.k8s.io/yaml"
)

// Entry is a cluster, a user and a context, all under one name, to merge
// into a kubeconfig file.
type Entry struct {
	Name      string
	Cluster   *clientcmdapi.Cluster
	User      *clientcmdapi.AuthInfo
	Namespace string
}

// MergeResult says what MergeFile did.
type MergeResult struct {
	// Path is the file written (symlinks resolved).
	Path string
	// Replaced is true when an entry of that name was there before.
	Replaced bool
	// Normalized is true when the file could not be edited in place and was
	// rewritten whole: every entry kept, but comments and layout lost.
	Normalized bool
}

// lockTimeout is how long MergeFile waits for another writer's lock.
const lockTimeout = 5 * time.Second

// MergeFile adds e to the kubeconfig file at path, or replaces the cluster,
// user and context of that name, and sets current-context to it if asked.
// Every other byte of the file is kept: the entries are spliced into the
// text, then the result is checked to hold exactly the old entries plus e.
// The file is written atomically (temporary file and rename) under
// kubectl's lock (path.lock), keeping its mode; a new file gets 0600.
func MergeFile(path string, e Entry, setCurrent bool) (*MergeResult, error) {
	return mergeFile(path, e, setCurrent, lockTimeout)
}

func mergeFile(path string, e Entry, setCurrent bool, wait time.Duration) (*MergeResult, error) {
	target, err := resolveLinks(path)
	if err != nil {
		return nil, fmt.Errorf("failed to resolve kubeconfig %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return nil, fmt.Errorf("failed to create the directory of kubeconfig %s: %w", target, err)
	}
	unlock, err := lockFile(target, wait)
	if err != nil {
		return nil, err
	}
	defer unlock()

	mode := os.FileMode(0o600)
	orig, err := os.ReadFile(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		orig = nil
	case err != nil:
		return nil, fmt.Errorf("failed to read kubeconfig %s: %w", target, err)
	default:
		info, err := os.Stat(target)
		if err != nil {
			return nil, fmt.Errorf("failed to stat kubeconfig %s: %w", target, err)
		}
		mode = info.Mode().Perm()
	}
	data, res, err := Merge(orig, e, setCurrent)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", target, err)
	}
	res.Path = target
	if err := writeAtomic(target, data, mode); err != nil {
		return nil, err
	}
	return res, nil
}

// Merge returns orig with e merged in, as MergeFile writes it.
func Merge(orig []byte, e Entry, setCurrent bool) ([]byte, *MergeResult, error) {
	before, err := clientcmd.Load(orig)
	if err != nil {
		return nil, nil, fmt.Errorf("it is not a valid kubeconfig, so it is left alone: %w", err)
	}
	want, rendered, err := render(e)
	if err != nil {
		return nil, nil, err
	}
	res := &MergeResult{Replaced: before.Contexts[e.Name] != nil || before.Clusters[e.Name] != nil || before.AuthInfos[e.Name] != nil}
	if len(bytes.TrimSpace(orig)) > 0 {
		if data, err := splice(orig, e.Name, rendered, setCurrent); err == nil && verify(before, data, want, setCurrent) == nil {
			return data, res, nil
		}
	}
	// A new or empty file, or one whose layout splice does not handle (flow
	// style lists, say): write it whole, every entry kept.
	after := before.DeepCopy()
	after.Clusters[e.Name], after.AuthInfos[e.Name], after.Contexts[e.Name] = want.Clusters[e.Name], want.AuthInfos[e.Name], want.Contexts[e.Name]
	if setCurrent {
		after.CurrentContext = e.Name
	}
	data, err := clientcmd.Write(*after)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to write the merged kubeconfig: %w", err)
	}
	if err := verify(before, data, want, setCurrent); err != nil {
		return nil, nil, err
	}
	res.Normalized = len(bytes.TrimSpace(orig)) > 0
	return data, res, nil
}

// render writes e as a kubeconfig of its own, and returns it decoded and its
// list items as text (kubectl's layout: "- cluster:" at column 0).
func render(e Entry) (*clientcmdapi.Config, map[string]string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[e.Name] = e.Cluster
	cfg.AuthInfos[e.Name] = e.User
	cfg.Contexts[e.Name] = &clientcmdapi.Context{Cluster: e.Name, AuthInfo: e.Name, Namespace: e.Namespace}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to render the entries for %s: %w", e.Name, err)
	}
	decoded, err := clientcmd.Load(data)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read back the entries for %s: %w", e.Name, err)
	}
	items := map[string]string{}
	key := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		switch {
		case line == "":
		case line[0] != ' ' && line[0] != '-':
			key, _, _ = strings.Cut(line, ":")
		case key == "clusters" || key == "contexts" || key == "users":
			items[key] += line
		}
	}
	return decoded, items, nil
}

// edit replaces orig[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// splice edits the text of a kubeconfig in place: in each of clusters,
// contexts and users it replaces the item called name, or adds it after the
// last item, indented as the others; it sets current-context if asked.
func splice(orig []byte, name string, items map[string]string, setCurrent bool) ([]byte, error) {
	if orig[len(orig)-1] != '\n' {
		orig = append(orig[:len(orig):len(orig)], '\n')
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(orig, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a single YAML mapping")
	}
	root := doc.Content[0]
	if root.Column != 1 {
		return nil, errors.New("the top-level keys are indented")
	}
	t := newText(orig)
	var edits []edit
	for _, key := range []string{"clusters", "contexts", "users"} {
		ed, err := t.listEdit(root, key, name, items[key])
		if err != nil {
			return nil, err
		}
		edits = append(edits, ed)
	}
	if setCurrent {
		ed, err := t.currentContextEdit(root, name)
		if err != nil {
			return nil, err
		}
		edits = append(edits, ed)
	}
	// Apply from the end so offsets stay valid; edits at one offset keep
	// their order (clusters before contexts before users).
	order := make([]int, len(edits))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		ea, eb := edits[order[a]], edits[order[b]]
		if ea.start != eb.start {
			return ea.start > eb.start
		}
		return order[a] > order[b]
	})
	out := append([]byte(nil), orig...)
	for _, i := range order {
		ed := edits[i]
		out = append(out[:ed.start:ed.start], append([]byte(ed.text), out[ed.end:]...)...)
	}
	return out, nil
}

// text is a file split into lines.
type text struct {
	data []byte
	// starts[n] is the offset of line n (1-based); starts[len] is len(data).
	starts []int
}

func newText(data []byte) *text {
	t := &text{data: data, starts: []int{0, 0}}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			t.starts = append(t.starts, i+1)
		}
	}
	t.starts = append(t.starts, len(data))
	return t
}

func (t *text) lines() int { return len(t.starts) - 2 }

func (t *text) line(n int) string { return string(t.data[t.starts[n]:t.starts[n+1]]) }

// start is the offset of line n, or the end of the data past the last line.
func (t *text) start(n int) int {
	if n > t.lines() {
		return len(t.data)
	}
	return t.starts[n]
}

// valueOf finds key in the root mapping: its key node, value node, and the
// line where the next key starts (past the last line when none does).
func (t *text) valueOf(root *yaml.Node, key string) (k, v *yaml.Node, next int) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			next = t.lines() + 1
			if i+2 < len(root.Content) {
				next = root.Content[i+2].Line
			}
			return root.Content[i], root.Content[i+1], next
		}
	}
	return nil, nil, 0
}

// end is where an item whose successor starts on line boundary ends: before
// the blank and comment lines that lead up to the successor.
func (t *text) end(first, boundary int) int {
	for boundary-1 > first {
		l := strings.TrimSpace(t.line(boundary - 1))
		if l != "" && !strings.HasPrefix(l, "#") {
			break
		}
		boundary--
	}
	return t.start(boundary)
}

func (t *text) listEdit(root *yaml.Node, key, name, item string) (edit, error) {
	k, v, next := t.valueOf(root, key)
	switch {
	case k == nil:
		at := len(t.data)
		return edit{at, at, key + ":\n" + item}, nil
	case v.Line == k.Line && (v.Tag == "!!null" || (v.Kind == yaml.SequenceNode && len(v.Content) == 0)):
		// "users:", "users: null" or "users: []" on one line.
		return edit{t.start(k.Line), t.start(k.Line + 1), key + ":\n" + item}, nil
	case v.Kind != yaml.SequenceNode || v.Style&yaml.FlowStyle != 0 || len(v.Content) == 0:
		return edit{}, fmt.Errorf("%s is not a block list", key)
	}
	dash, err := t.dashIndent(v.Content[0])
	if err != nil {
		return edit{}, err
	}
	item = indent(item, dash)
	for i, it := range v.Content {
		if itemName(it) != name {
			continue
		}
		boundary := next
		if i+1 < len(v.Content) {
			boundary = v.Content[i+1].Line
		}
		return edit{t.start(it.Line), t.end(it.Line, boundary), item}, nil
	}
	last := v.Content[len(v.Content)-1]
	at := t.end(last.Line, next)
	return edit{at, at, item}, nil
}

// dashIndent is the number of spaces before the "-" of a block list item.
func (t *text) dashIndent(item *yaml.Node) (int, error) {
	l := t.line(item.Line)
	col := min(item.Column-1, len(l))
	dash := strings.LastIndex(l[:col], "-")
	if dash < 0 || strings.TrimSpace(l[:dash]) != "" {
		return 0, errors.New("a list item does not start its line")
	}
	return dash, nil
}

func (t *text) currentContextEdit(root *yaml.Node, name string) (edit, error) {
	line, err := sigsyaml.Marshal(map[string]string{"current-context": name})
	if err != nil {
		return edit{}, err
	}
	k, v, _ := t.valueOf(root, "current-context")
	switch {
	case k == nil:
		at := len(t.data)
		return edit{at, at, string(line)}, nil
	case v.Kind == yaml.ScalarNode && v.Line == k.Line && !strings.Contains(v.Value, "\n"):
		return edit{t.start(k.Line), t.start(k.Line + 1), string(line)}, nil
	}
	return edit{}, errors.New("current-context is not a one-line value")
}

func itemName(item *yaml.Node) string {
	if item.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		if item.Content[i].Value == "name" {
			return item.Content[i+1].Value
		}
	}
	return ""
}

func indent(s string, n int) string {
	if n == 0 {
		return s
	}
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString(pad + line)
		}
	}
	return b.String()
}

// verify checks that data holds every entry of before untouched, and want's
// entries under their name.
func verify(before *clientcmdapi.Config, data []byte, want *clientcmdapi.Config, setCurrent bool) error {
	after, err := clientcmd.Load(data)
	if err != nil {
		return fmt.Errorf("the merged kubeconfig does not decode: %w", err)
	}
	expect := before.DeepCopy()
	for n, c := range want.Clusters {
		expect.Clusters[n] = c
	}
	for n, u := range want.AuthInfos {
		expect.AuthInfos[n] = u
	}
	for n, c := range want.Contexts {
		expect.Contexts[n] = c
		if setCurrent {
			expect.CurrentContext = n
		}
	}
	if !reflect.DeepEqual(expect, after) {
		return errors.New("the merged kubeconfig is not the old one plus the new entries")
	}
	return nil
}

// lockFile takes kubectl's lock on a kubeconfig: the file path.lock, made
// exclusively. It waits a little for another writer.
func lockFile(path string, wait time.Duration) (func(), error) {
	lock := path + ".lock"
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_ = f.Close()
			return func() { _ = os.Remove(lock) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("failed to lock kubeconfig %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("kubeconfig %s is locked by %s: another kubectl may be writing it; if none is, remove the stale lock", path, lock)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// resolveLinks follows path's symlinks to the file they name, which need
// not exist: a kubeconfig that is a dangling symlink (into a dotfiles
// repository, say) is created where the link points, the link kept.
func resolveLinks(path string) (string, error) {
	for range 40 {
		info, err := os.Lstat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return path, nil
		case err != nil:
			return "", err
		case info.Mode()&os.ModeSymlink == 0:
			return filepath.EvalSymlinks(path)
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, given mode, renamed over path.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("failed to write kubeconfig %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("failed to write kubeconfig %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("failed to write kubeconfig %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("failed to write kubeconfig %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("failed to write kubeconfig %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("failed to replace kubeconfig %s: %w", path, err)
	}
	return nil
}
