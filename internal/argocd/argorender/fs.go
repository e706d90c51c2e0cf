package argorender

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errOutside is returned for a path, or a symlink's target, out of the
// checkout: nothing out of it is read.
type errOutside struct{ path string }

func (e *errOutside) Error() string {
	return fmt.Sprintf("%s is out of the checkout: not read", e.path)
}

// inside says path (absolute, clean) is root or under it.
func inside(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// confine resolves the symlinks of path (absolute, clean, lexically in
// root) and checks that what it names is in root too.
func confine(path, root string) (string, error) {
	if !inside(path, root) {
		return "", &errOutside{path: path}
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if !inside(resolved, root) {
		return "", &errOutside{path: path}
	}
	return resolved, nil
}

// readConfined reads the file path of the checkout root.
func readConfined(path, root string) ([]byte, error) {
	resolved, err := confine(filepath.Clean(path), root)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(resolved)
}

// checkoutFS is the file system kustomize reads and edits: the files of
// the checkout root, read from the disk when asked for (never out of the
// root, a symlink out of it is refused), and what kustomize writes (its
// `kustomize edit` steps), kept in memory: the checkout is never written.
// Relative paths are relative to cwd.
type checkoutFS struct {
	root string
	cwd  string

	mu      sync.Mutex
	files   map[string][]byte // written
	dirs    map[string]bool   // made
	removed map[string]bool   // removed (RemoveAll)
}

var _ filesys.FileSystem = (*checkoutFS)(nil)

func newCheckoutFS(root, cwd string) *checkoutFS {
	return &checkoutFS{root: root, cwd: cwd, files: map[string][]byte{}, dirs: map[string]bool{}, removed: map[string]bool{}}
}

func (f *checkoutFS) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.cwd, p)
	}
	return filepath.Clean(p)
}

// gone says p was removed (and not written since).
func (f *checkoutFS) gone(p string) bool {
	for q := p; ; q = filepath.Dir(q) {
		if f.removed[q] {
			return true
		}
		if q == filepath.Dir(q) {
			return false
		}
	}
}

// stat is what path p is: in memory (written or made) or on the disk.
func (f *checkoutFS) stat(p string) (isDir bool, resolved string, err error) {
	f.mu.Lock()
	_, file := f.files[p]
	dir := f.dirs[p]
	gone := f.gone(p)
	f.mu.Unlock()
	switch {
	case file:
		return false, p, nil
	case dir:
		return true, p, nil
	case gone:
		return false, "", fs.ErrNotExist
	}
	resolved, err = confine(p, f.root)
	if err != nil {
		return false, "", err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return false, "", err
	}
	return fi.IsDir(), resolved, nil
}

func (f *checkoutFS) Create(path string) (filesys.File, error) {
	p := f.abs(path)
	if !inside(p, f.root) {
		return nil, &errOutside{path: p}
	}
	return &memFile{fs: f, path: p}, nil
}

func (f *checkoutFS) Mkdir(path string) error { return f.MkdirAll(path) }

func (f *checkoutFS) MkdirAll(path string) error {
	p := f.abs(path)
	if !inside(p, f.root) {
		return &errOutside{path: p}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for q := p; inside(q, f.root); q = filepath.Dir(q) {
		f.dirs[q] = true
		delete(f.removed, q)
		if q == f.root {
			break
		}
	}
	return nil
}

func (f *checkoutFS) RemoveAll(path string) error {
	p := f.abs(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.files {
		if inside(k, p) {
			delete(f.files, k)
		}
	}
	for k := range f.dirs {
		if inside(k, p) {
			delete(f.dirs, k)
		}
	}
	f.removed[p] = true
	return nil
}

func (f *checkoutFS) Open(path string) (filesys.File, error) {
	p := f.abs(path)
	data, err := f.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return &memFile{fs: f, path: p, r: bytes.NewReader(data), size: int64(len(data))}, nil
}

func (f *checkoutFS) IsDir(path string) bool {
	dir, _, err := f.stat(f.abs(path))
	return err == nil && dir
}

func (f *checkoutFS) ReadDir(path string) ([]string, error) {
	p := f.abs(path)
	dir, resolved, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	if !dir {
		return nil, fmt.Errorf("%s is not a directory", path)
	}
	var names []string
	if resolved != p || !f.madeOnly(p) {
		if entries, err := os.ReadDir(resolved); err == nil {
			for _, e := range entries {
				if !f.isGone(filepath.Join(p, e.Name())) {
					names = append(names, e.Name())
				}
			}
		}
	}
	f.mu.Lock()
	for k := range f.files {
		if filepath.Dir(k) == p {
			names = append(names, filepath.Base(k))
		}
	}
	for k := range f.dirs {
		if k != p && filepath.Dir(k) == p {
			names = append(names, filepath.Base(k))
		}
	}
	f.mu.Unlock()
	slices.Sort(names)
	return slices.Compact(names), nil
}

func (f *checkoutFS) isGone(p string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gone(p)
}

// madeOnly says the directory p is in memory only.
func (f *checkoutFS) madeOnly(p string) bool {
	_, err := os.Lstat(p)
	return err != nil
}

// CleanedAbs is as on the disk: symlinks resolved (in the checkout).
func (f *checkoutFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	p := f.abs(path)
	dir, resolved, err := f.stat(p)
	if err != nil {
		return "", "", fmt.Errorf("evalsymlink failure on '%s' : %w", path, err)
	}
	if dir {
		return filesys.ConfirmedDir(resolved), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(resolved)), filepath.Base(resolved), nil
}

func (f *checkoutFS) Exists(path string) bool {
	_, _, err := f.stat(f.abs(path))
	return err == nil
}

// Glob is filepath.Glob's, in the checkout only, without hidden files
// unless the pattern names them (as kustomize's on-disk file system).
func (f *checkoutFS) Glob(pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	p := f.abs(pattern)
	if !inside(p, f.root) {
		return nil, nil
	}
	matches := []string{f.root}
	rel, _ := filepath.Rel(f.root, p)
	if rel != "." {
		for _, seg := range strings.Split(rel, string(filepath.Separator)) {
			var next []string
			for _, m := range matches {
				if !hasMeta(seg) {
					c := filepath.Join(m, seg)
					if f.Exists(c) {
						next = append(next, c)
					}
					continue
				}
				if !f.IsDir(m) {
					continue
				}
				names, err := f.ReadDir(m)
				if err != nil {
					continue
				}
				for _, n := range names {
					if ok, _ := filepath.Match(seg, n); ok {
						next = append(next, filepath.Join(m, n))
					}
				}
			}
			matches = next
		}
	}
	if !filesys.IsHiddenFilePath(pattern) {
		matches = filesys.RemoveHiddenFiles(matches)
	}
	if !filepath.IsAbs(pattern) {
		if !hasMeta(pattern) && len(matches) == 1 {
			return []string{pattern}, nil
		}
		for i, m := range matches {
			if r, err := filepath.Rel(f.cwd, m); err == nil {
				matches[i] = r
			}
		}
	}
	return matches, nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

func (f *checkoutFS) ReadFile(path string) ([]byte, error) {
	p := f.abs(path)
	f.mu.Lock()
	data, ok := f.files[p]
	gone := f.gone(p)
	f.mu.Unlock()
	if ok {
		return slices.Clone(data), nil
	}
	if gone {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return readConfined(p, f.root)
}

func (f *checkoutFS) WriteFile(path string, data []byte) error {
	p := f.abs(path)
	if !inside(p, f.root) {
		return &errOutside{path: p}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[p] = slices.Clone(data)
	delete(f.removed, p)
	return nil
}

func (f *checkoutFS) Walk(path string, walkFn filepath.WalkFunc) error {
	p := f.abs(path)
	fi, err := f.lstat(p)
	if err != nil {
		return walkFn(path, nil, err)
	}
	err = f.walk(p, fi, walkFn)
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

func (f *checkoutFS) walk(p string, fi fs.FileInfo, walkFn filepath.WalkFunc) error {
	if !fi.IsDir() {
		return walkFn(p, fi, nil)
	}
	if err := walkFn(p, fi, nil); err != nil {
		return err
	}
	names, err := f.ReadDir(p)
	if err != nil {
		return walkFn(p, fi, err)
	}
	for _, n := range names {
		c := filepath.Join(p, n)
		cfi, err := f.lstat(c)
		if err != nil {
			if err := walkFn(c, nil, err); err != nil && !errors.Is(err, filepath.SkipDir) {
				return err
			}
			continue
		}
		if err := f.walk(c, cfi, walkFn); err != nil {
			if !cfi.IsDir() || !errors.Is(err, filepath.SkipDir) {
				return err
			}
		}
	}
	return nil
}

// lstat is os.Lstat's in the checkout (a symlink is not followed), or
// what is in memory.
func (f *checkoutFS) lstat(p string) (fs.FileInfo, error) {
	f.mu.Lock()
	data, file := f.files[p]
	dir := f.dirs[p]
	gone := f.gone(p)
	f.mu.Unlock()
	switch {
	case file:
		return memInfo{name: filepath.Base(p), size: int64(len(data))}, nil
	case dir:
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && inside(p, f.root) {
			return fi, nil
		}
		return memInfo{name: filepath.Base(p), dir: true}, nil
	case gone:
		return nil, fs.ErrNotExist
	}
	if !inside(p, f.root) {
		return nil, &errOutside{path: p}
	}
	return os.Lstat(p)
}

// memFile is a file of checkoutFS: read from a copy, written to memory.
type memFile struct {
	fs   *checkoutFS
	path string
	r    *bytes.Reader
	w    bytes.Buffer
	size int64
}

func (m *memFile) Read(p []byte) (int, error) {
	if m.r == nil {
		return 0, fmt.Errorf("%s is open for writing", m.path)
	}
	return m.r.Read(p)
}

func (m *memFile) Write(p []byte) (int, error) { return m.w.Write(p) }

func (m *memFile) Close() error {
	if m.r == nil {
		return m.fs.WriteFile(m.path, m.w.Bytes())
	}
	return nil
}

func (m *memFile) Stat() (os.FileInfo, error) {
	return memInfo{name: filepath.Base(m.path), size: m.size}, nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
