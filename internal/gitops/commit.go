package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Edit is the new content of one file of the checkout.
type Edit struct {
	// File is relative to the checkout, with slashes.
	File          string
	Before, After []byte
	mode          os.FileMode
}

// Edit returns the file as it is now, to be changed.
func (c *Checkout) Edit(rel string) (*Edit, error) {
	f := c.parse(rel)
	if f.err != nil {
		return nil, fmt.Errorf("%s: %w", rel, f.err)
	}
	return &Edit{File: rel, Before: f.data, After: f.data, mode: f.mode}, nil
}

// Diff is the unified diff of the edits, as git diff shows it.
func Diff(edits []*Edit) (string, error) {
	var b strings.Builder
	for _, e := range edits {
		d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(e.Before)), B: difflib.SplitLines(string(e.After)),
			FromFile: "a/" + e.File, ToFile: "b/" + e.File, Context: 3,
		})
		if err != nil {
			return "", err
		}
		b.WriteString(d)
	}
	return b.String(), nil
}

// Dirty are the files among edits that have changes not committed, staged
// or not: a commit of them would carry someone's unfinished work.
func (c *Checkout) Dirty(ctx context.Context, edits []*Edit) ([]string, error) {
	args := []string{"status", "--porcelain", "--untracked-files=all", "--"}
	for _, e := range edits {
		args = append(args, e.File)
	}
	out, err := run(ctx, c.Dir, nil, args...)
	if err != nil {
		return nil, err
	}
	var dirty []string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if len(line) > 3 {
			dirty = append(dirty, line[3:])
		}
	}
	return dirty, nil
}

// Commit writes the edits and commits exactly those files, with message,
// through the user's git: their identity, hooks and signing. With branch,
// it first creates that branch from HEAD and switches to it. When anything
// fails, the files, the index and the branch are put back as they were.
// It returns the new commit.
func (c *Checkout) Commit(ctx context.Context, edits []*Edit, branch, message string) (commit string, err error) {
	if branch != "" {
		if _, err := run(ctx, c.Dir, nil, "switch", "-q", "-c", branch); err != nil {
			return "", err
		}
		defer func() {
			if err != nil {
				_, e1 := run(context.WithoutCancel(ctx), c.Dir, nil, "switch", "-q", "-")
				_, e2 := run(context.WithoutCancel(ctx), c.Dir, nil, "branch", "-q", "-D", branch)
				err = errors.Join(err, e1, e2)
			}
		}()
	}
	files := make([]string, 0, len(edits))
	for _, e := range edits {
		files = append(files, e.File)
	}
	restore := func() error {
		var errs []error
		for _, e := range edits {
			errs = append(errs, os.WriteFile(filepath.Join(c.Dir, filepath.FromSlash(e.File)), e.Before, e.mode))
		}
		_, e := run(context.WithoutCancel(ctx), c.Dir, nil, append([]string{"reset", "-q", "--"}, files...)...)
		return errors.Join(append(errs, e)...)
	}
	for _, e := range edits {
		if err := os.WriteFile(filepath.Join(c.Dir, filepath.FromSlash(e.File)), e.After, e.mode); err != nil {
			return "", errors.Join(fmt.Errorf("failed to write %s: %w", e.File, err), restore())
		}
	}
	if _, err := run(ctx, c.Dir, nil, append([]string{"add", "--"}, files...)...); err != nil {
		return "", errors.Join(err, restore())
	}
	if _, err := run(ctx, c.Dir, []byte(message), append([]string{"commit", "-q", "-F", "-", "--"}, files...)...); err != nil {
		return "", errors.Join(err, restore())
	}
	out, err := run(ctx, c.Dir, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
