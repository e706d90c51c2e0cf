package fleet

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ErrPath marks a path or environment that does not address the clusters it
// should: none, or more than one.
var ErrPath = errors.New("path does not address a cluster")

// PathError says where a path stopped matching and what it could have been.
type PathError struct {
	// Path is the whole path asked for.
	Path string
	// Parent is the path of the cluster whose children did not match.
	Parent string
	// Segment is the segment that did not match.
	Segment Segment
	// Candidates are the paths of the children at that level that match
	// Segment (when ambiguous) or of all of them (when nothing matched).
	Candidates []string
	Ambiguous  bool
	// Cause is set when the walk could not read the parent's children.
	Cause string
}

func (e *PathError) Error() string {
	parent := DescribePath(e.Parent)
	switch {
	case e.Cause != "":
		return fmt.Sprintf("cannot resolve path %q: %s: %s", e.Path, parent, e.Cause)
	case e.Ambiguous:
		return fmt.Sprintf("path %q is ambiguous: %q names clusters in several namespaces of %s; use one of: %s",
			e.Path, e.Segment.String(), parent, strings.Join(e.Candidates, ", "))
	case len(e.Candidates) == 0:
		return fmt.Sprintf("no cluster %q in %s: it manages no clusters", e.Segment.String(), parent)
	default:
		return fmt.Sprintf("no cluster %q in %s; candidates: %s", e.Segment.String(), parent, strings.Join(e.Candidates, ", "))
	}
}

// Unwrap makes errors.Is(err, ErrPath) true.
func (e *PathError) Unwrap() error { return ErrPath }

// EnvError says that an environment matched no master.
type EnvError struct {
	Env string
	// Masters are the root's children, as "name (provider, clusterset SET)".
	Masters []string
	// Kinds name the groupings of clusters, beside name, an environment
	// can be (Options.EnvKinds: "provider", "OCM clusterset").
	Kinds []string
	// Cause is set when the root's children could not be read.
	Cause string
}

func (e *EnvError) Error() string {
	switch {
	case e.Cause != "":
		return fmt.Sprintf("cannot resolve environment %q: the root cluster: %s", e.Env, e.Cause)
	case len(e.Masters) == 0:
		return fmt.Sprintf("no environment %q: the root cluster manages no clusters", e.Env)
	}
	kinds := append([]string{"name"}, e.Kinds...)
	what := kinds[0]
	if len(kinds) > 1 {
		what = strings.Join(kinds[:len(kinds)-1], ", ") + " or " + kinds[len(kinds)-1]
	}
	return fmt.Sprintf("no environment %q: no master has that %s; masters: %s", e.Env, what, strings.Join(e.Masters, ", "))
}

// Unwrap makes errors.Is(err, ErrPath) true.
func (e *EnvError) Unwrap() error { return ErrPath }

// DescribePath names a path in a sentence: "the root cluster" or the path.
func DescribePath(path string) string {
	if path == "" {
		return "the root cluster"
	}
	return path
}

// matchChild finds the one child that want addresses among children, named
// by segs; the error lists the candidates.
func matchChild(path, parent string, children []Child, segs []Segment, want Segment) (int, error) {
	var hits []int
	for i, c := range children {
		if want.Matches(c.Namespace, c.Name) {
			hits = append(hits, i)
		}
	}
	if len(hits) == 1 {
		return hits[0], nil
	}
	perr := &PathError{Path: path, Parent: parent, Segment: want, Ambiguous: len(hits) > 1}
	if perr.Ambiguous {
		for _, i := range hits {
			perr.Candidates = append(perr.Candidates, JoinPath(parent, Segment{Namespace: children[i].Namespace, Name: children[i].Name}))
		}
	} else {
		for _, s := range segs {
			perr.Candidates = append(perr.Candidates, JoinPath(parent, s))
		}
	}
	return 0, perr
}

// matchEnv picks the masters of an environment: the one named env, or,
// where no master has that name, those a facet places in env (CAPI's
// infrastructure provider, an OCM ManagedClusterSet).
func matchEnv(env string, masters []Child, kinds []string) ([]int, error) {
	var byName, byKind []int
	for i, m := range masters {
		if m.Name == env {
			byName = append(byName, i)
		}
		if slices.ContainsFunc(m.Facets.envs(), func(e Env) bool { return e.Name == env }) {
			byKind = append(byKind, i)
		}
	}
	switch {
	case len(byName) > 0:
		return byName, nil
	case len(byKind) > 0:
		return byKind, nil
	}
	eerr := &EnvError{Env: env, Kinds: kinds}
	for _, m := range masters {
		var about []string
		for _, e := range m.Facets.envs() {
			about = append(about, e.About)
		}
		if len(about) == 0 {
			eerr.Masters = append(eerr.Masters, m.Name)
			continue
		}
		eerr.Masters = append(eerr.Masters, fmt.Sprintf("%s (%s)", m.Name, strings.Join(about, ", ")))
	}
	sort.Strings(eerr.Masters)
	return nil, eerr
}
