package fleet

import (
	"context"
	"fmt"
	"strings"
)

// A path addresses a cluster by the names of the Cluster objects from the
// root down, joined by "/": "aws" is a master, "aws/team-a" a tenant of aws.
// When two Clusters of one parent share a name in different namespaces, a
// segment qualifies the name with its namespace as "namespace:name"; Kubernetes
// names cannot hold ':' or '/', so the form is unambiguous.

// Segment is one step of a path.
type Segment struct {
	// Namespace is empty when the segment gives the name alone.
	Namespace string
	Name      string
}

func (s Segment) String() string {
	if s.Namespace == "" {
		return s.Name
	}
	return s.Namespace + ":" + s.Name
}

// Matches reports whether the Cluster namespace/name is addressed by s.
func (s Segment) Matches(namespace, name string) bool {
	return s.Name == name && (s.Namespace == "" || s.Namespace == namespace)
}

// ParsePath splits a path into segments. The empty path is the root.
func ParsePath(p string) ([]Segment, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, nil
	}
	var segs []Segment
	for _, part := range strings.Split(p, "/") {
		ns, name, qualified := strings.Cut(part, ":")
		if !qualified {
			ns, name = "", part
		}
		if name == "" || (qualified && ns == "") || strings.Contains(name, ":") {
			return nil, fmt.Errorf("invalid path %q: segment %q must be NAME or NAMESPACE:NAME", p, part)
		}
		segs = append(segs, Segment{Namespace: ns, Name: name})
	}
	return segs, nil
}

// JoinPath appends a child's segment to its parent's path.
func JoinPath(parent string, s Segment) string {
	if parent == "" {
		return s.String()
	}
	return parent + "/" + s.String()
}

// Segments names each child: by its name alone, or as namespace:name where
// siblings in other namespaces share the name.
func Segments(children []Child) []Segment {
	count := map[string]int{}
	for _, c := range children {
		count[c.Name]++
	}
	segs := make([]Segment, len(children))
	for i, c := range children {
		segs[i] = Segment{Name: c.Name}
		if count[c.Name] > 1 {
			segs[i].Namespace = c.Namespace
		}
	}
	return segs
}

// ComparePaths orders paths segment by segment, so that a cluster's subtree
// follows it directly: aws, aws/team-a, aws-east (not aws, aws-east,
// aws/team-a); siblings go by name, then namespace, as in the tree.
func ComparePaths(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	if a == "" {
		as = nil
	}
	if b == "" {
		bs = nil
	}
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareSegments(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

// compareSegments orders by name, then namespace, as the walk orders siblings.
func compareSegments(a, b string) int {
	an, aname, aq := strings.Cut(a, ":")
	if !aq {
		an, aname = "", a
	}
	bn, bname, bq := strings.Cut(b, ":")
	if !bq {
		bn, bname = "", b
	}
	if c := strings.Compare(aname, bname); c != 0 {
		return c
	}
	return strings.Compare(an, bn)
}

// RootPath is how the root cluster's path is shown, which is empty in the
// model: every command reads "/" as the root.
const RootPath = "/"

// DisplayPath is a path as output shows it: "/" for the root.
func DisplayPath(path string) string {
	if path == "" {
		return RootPath
	}
	return path
}

// Plural is "1 cluster", "2 clusters": how counts of the fleet are spoken.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

type pathKey struct{}

// WithPath is ctx for connecting to the cluster at path: a Cluster's
// Connect reads it (PathOf) to reach the cluster as the operator said for
// that path (a route).
func WithPath(ctx context.Context, path string) context.Context {
	return context.WithValue(ctx, pathKey{}, path)
}

// PathOf is the path of the cluster ctx connects to (WithPath); "" when
// unknown.
func PathOf(ctx context.Context) string {
	p, _ := ctx.Value(pathKey{}).(string)
	return p
}
