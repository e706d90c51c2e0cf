package fleet

import (
	"reflect"
	"testing"
)

// FuzzParsePath: a PATH the user typed (or a shell completed) parses to
// segments that join back to a path that parses to the same segments, or
// is refused. Never a panic.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"aws/team-a", "tenants:team-a", "/aws//", ":", "a:b:c", "a/\x1b[2J", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		segs, err := ParsePath(p)
		if err != nil {
			return
		}
		joined := ""
		for _, s := range segs {
			joined = JoinPath(joined, s)
		}
		again, err := ParsePath(joined)
		if err != nil || !reflect.DeepEqual(again, segs) {
			t.Fatalf("%q parsed to %v, joined to %q, parsed again to %v, %v", p, segs, joined, again, err)
		}
		_ = DisplayPath(joined)
	})
}
