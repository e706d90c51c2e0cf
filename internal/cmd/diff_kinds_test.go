package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

// --kind picks the engines whose units are diffed: each alone, both, or
// both by default; an unknown kind is an error.
func TestDiffKinds(t *testing.T) {
	for _, tt := range []struct {
		kinds []string
		want  []string
		err   string
	}{
		{nil, []string{"ks", "app"}, ""},
		{[]string{"ks"}, []string{"ks"}, ""},
		{[]string{"app"}, []string{"app"}, ""},
		{[]string{"app", "ks"}, []string{"ks", "app"}, ""},
		{[]string{"ks", "bogus"}, nil, `invalid --kind "bogus"`},
	} {
		name := strings.Join(tt.kinds, ",")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			root := &RootOptions{Providers: registry.Providers()}
			o := &DiffOptions{RootOptions: root, Kinds: tt.kinds, Units: map[string]*[]string{}}
			for _, d := range root.Providers.Differs() {
				o.Units[d.DiffKind().Short] = new([]string)
			}
			err := o.Complete(nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Complete: %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range o.differs {
				got = append(got, d.DiffKind().Short)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("--kind %v diffs %v, want %v", tt.kinds, got, tt.want)
			}
		})
	}
}
