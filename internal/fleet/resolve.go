package fleet

import (
	"context"
	"errors"
	"sort"
	"time"
)

// ErrRootPath marks an empty path where a cluster below the root is needed.
var ErrRootPath = errors.New("the empty path names the root cluster, your kubeconfig's current context; give the path of a cluster below it, e.g. aws or aws/team-a")

// Target is a cluster found by its path, and the cluster that holds its
// CAPI Cluster object and kubeconfig Secrets.
type Target[C any] struct {
	// Path is the cluster's path, segments qualified where the parent holds
	// namesakes, as the tree prints it.
	Path string
	// Parent is a connection to the cluster holding the Cluster object.
	Parent C
	// ParentPath is the parent's path.
	ParentPath string
	// Child is what the parent's Cluster object says.
	Child Child
}

// Resolve follows path from root, connecting to each cluster on the way but
// not to the cluster at the end, which may well be unreachable: what is
// wanted of it (its kubeconfig) lives in its parent. Each hop gets timeout.
// It reads nothing but the children of the clusters on the way.
func Resolve[C Cluster[C]](ctx context.Context, root C, path []Segment, timeout time.Duration) (*Target[C], error) {
	if len(path) == 0 {
		return nil, ErrRootPath
	}
	full := pathRef{full: path}.String()
	cur, curPath := root, ""
	for i, seg := range path {
		hop, cancel := hopContext(ctx, timeout)
		children, err := cur.Children(hop, i < len(path)-1)
		cancel()
		if err != nil && !isPartial(err) {
			return nil, &PathError{Path: full, Parent: curPath, Segment: seg, Cause: err.Error()}
		}
		sortChildren(children)
		segs := Segments(children)
		idx, err := matchChild(full, curPath, children, segs, seg)
		if err != nil {
			return nil, err
		}
		childPath := JoinPath(curPath, segs[idx])
		if i == len(path)-1 {
			return &Target[C]{Path: childPath, Parent: cur, ParentPath: curPath, Child: children[idx]}, nil
		}
		hop, cancel = hopContext(ctx, timeout)
		next, err := cur.Connect(WithPath(hop, childPath), children[idx])
		cancel()
		if err != nil {
			return nil, &PathError{Path: full, Parent: childPath, Segment: path[i+1], Cause: err.Error()}
		}
		cur, curPath = next, childPath
	}
	panic("unreachable")
}

func hopContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// sortChildren orders siblings as paths lead: by name, then namespace.
func sortChildren(children []Child) {
	sort.Slice(children, func(i, j int) bool {
		if children[i].Name != children[j].Name {
			return children[i].Name < children[j].Name
		}
		return children[i].Namespace < children[j].Namespace
	})
}

// ChildPaths returns the paths of the clusters that the cluster at path
// holds, connecting only to the clusters on the way: what completing the
// next segment of a path needs. Each hop gets timeout.
func ChildPaths[C Cluster[C]](ctx context.Context, root C, path []Segment, timeout time.Duration) ([]string, error) {
	cur, curPath := root, ""
	if len(path) > 0 {
		target, err := Resolve(ctx, root, path, timeout)
		if err != nil {
			return nil, err
		}
		hop, cancel := hopContext(ctx, timeout)
		defer cancel()
		if cur, err = target.Parent.Connect(WithPath(hop, target.Path), target.Child); err != nil {
			return nil, err
		}
		defer cur.Close()
		curPath = target.Path
	}
	hop, cancel := hopContext(ctx, timeout)
	defer cancel()
	children, err := cur.Children(hop, false)
	if err != nil && !isPartial(err) {
		return nil, err
	}
	sortChildren(children)
	var out []string
	for _, s := range Segments(children) {
		out = append(out, JoinPath(curPath, s))
	}
	return out, nil
}

// isPartial reports whether err is a Children that read some edge sources:
// the children it returned are those of the others, enough to go on.
func isPartial(err error) bool {
	var partial *PartialChildren
	return errors.As(err, &partial)
}
