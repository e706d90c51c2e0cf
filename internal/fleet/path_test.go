package fleet_test

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		want    []fleet.Segment
		wantErr string
	}{
		{name: "the root", path: "", want: nil},
		{name: "a master", path: "aws", want: []fleet.Segment{{Name: "aws"}}},
		{name: "a tenant", path: "aws/team-a", want: []fleet.Segment{{Name: "aws"}, {Name: "team-a"}}},
		{name: "a qualified tenant", path: "aws/tenants:team-a", want: []fleet.Segment{{Name: "aws"}, {Namespace: "tenants", Name: "team-a"}}},
		{name: "an empty segment", path: "aws//team-a", wantErr: `invalid path "aws//team-a": segment "" must be NAME or NAMESPACE:NAME`},
		{name: "an empty namespace", path: ":team-a", wantErr: `invalid path ":team-a": segment ":team-a" must be NAME or NAMESPACE:NAME`},
		{name: "two colons", path: "a:b:c", wantErr: `invalid path "a:b:c": segment "a:b:c" must be NAME or NAMESPACE:NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fleet.ParsePath(tt.path)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSegmentsQualifyOnlySharedNames(t *testing.T) {
	got := fleet.Segments([]fleet.Child{
		{Name: "team-a", Namespace: "tenants"}, {Name: "team-a", Namespace: "staging"}, {Name: "team-b", Namespace: "tenants"},
	})
	want := []fleet.Segment{{Namespace: "tenants", Name: "team-a"}, {Namespace: "staging", Name: "team-a"}, {Name: "team-b"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("segments (-want +got):\n%s", diff)
	}
	for _, s := range got {
		back, err := fleet.ParsePath(fleet.JoinPath("aws", s))
		if err != nil || back[1] != s {
			t.Errorf("segment %v does not survive JoinPath/ParsePath: %v, %v", s, back, err)
		}
	}
}

func TestComparePathsKeepsSubtreesTogether(t *testing.T) {
	paths := []string{"aws-east", "aws/tenants:team-a", "", "aws/team-b", "aws", "azure", "aws/staging:team-a", "aws/tenants:team-a/x"}
	sort.Slice(paths, func(i, j int) bool { return fleet.ComparePaths(paths[i], paths[j]) < 0 })
	want := []string{"", "aws", "aws/staging:team-a", "aws/tenants:team-a", "aws/tenants:team-a/x", "aws/team-b", "aws-east", "azure"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
