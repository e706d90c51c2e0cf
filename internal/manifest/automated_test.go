package manifest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-fleet/kubectl-fleet/internal/manifest"
)

// application is an Argo CD Application up to its spec's first key; the
// cases add the rest.
const application = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
`

// TestSetAutomated suspends and resumes automated sync in each way an
// Application may be written: only the lines of automated.enabled change,
// the same edit again changes nothing, and where noted the opposite edit
// gives the input back byte for byte.
func TestSetAutomated(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		doc     int
		enabled bool
		// want is the output; "" when it is the input.
		want    string
		changed bool
		manual  bool
		// restores: the opposite edit gives the input back.
		restores bool
	}{{
		name: "block suspend: a line of its own, first in automated, comments kept",
		in: application + `  syncPolicy:
    automated:    # on since the migration
      # delete what git no longer has
      prune: true
      selfHeal: true
    syncOptions:
    - CreateNamespace=true
`,
		want: application + `  syncPolicy:
    automated:    # on since the migration
      enabled: false
      # delete what git no longer has
      prune: true
      selfHeal: true
    syncOptions:
    - CreateNamespace=true
`,
		changed: true, restores: true,
	}, {
		name:    "block suspend at four spaces of indentation",
		in:      application + "  syncPolicy:\n      automated:\n          prune: true\n",
		want:    application + "  syncPolicy:\n      automated:\n          enabled: false\n          prune: true\n",
		changed: true, restores: true,
	}, {
		name:    "block suspend of enabled: true rewrites the value",
		in:      application + "  syncPolicy:\n    automated:\n      enabled: true # explicit\n      prune: true\n",
		want:    application + "  syncPolicy:\n    automated:\n      enabled: false # explicit\n      prune: true\n",
		changed: true, restores: true,
	}, {
		name:    "block resume removes the line",
		in:      application + "  syncPolicy:\n    automated:\n      prune: true\n      enabled: false\n      selfHeal: true\n",
		enabled: true,
		want:    application + "  syncPolicy:\n    automated:\n      prune: true\n      selfHeal: true\n",
		changed: true,
	}, {
		name:    "block resume writes true where the line has a comment",
		in:      application + "  syncPolicy:\n    automated:\n      prune: true\n      enabled: false # incident 42\n",
		enabled: true,
		want:    application + "  syncPolicy:\n    automated:\n      prune: true\n      enabled: true # incident 42\n",
		changed: true, restores: true,
	}, {
		name:    "block resume writes true above a head comment",
		in:      application + "  syncPolicy:\n    automated:\n      prune: true\n      # off for the freeze\n      enabled: false\n",
		enabled: true,
		want:    application + "  syncPolicy:\n    automated:\n      prune: true\n      # off for the freeze\n      enabled: true\n",
		changed: true, restores: true,
	}, {
		name:    "block resume keeps automated a mapping: an empty block would be null, manual",
		in:      application + "  syncPolicy:\n    automated:\n      enabled: false\n",
		enabled: true,
		want:    application + "  syncPolicy:\n    automated:\n      enabled: true\n",
		changed: true, restores: true,
	}, {
		name:    "flow {} suspend",
		in:      application + "  syncPolicy:\n    automated: {}\n",
		want:    application + "  syncPolicy:\n    automated: {enabled: false}\n",
		changed: true, restores: true,
	}, {
		name:    "flow suspend: the first pair",
		in:      application + "  syncPolicy:\n    automated: {prune: true, selfHeal: true} # both\n",
		want:    application + "  syncPolicy:\n    automated: {enabled: false, prune: true, selfHeal: true} # both\n",
		changed: true, restores: true,
	}, {
		name:    "flow syncPolicy",
		in:      application + "  syncPolicy: {automated: {selfHeal: true}, syncOptions: [CreateNamespace=true]}\n",
		want:    application + "  syncPolicy: {automated: {enabled: false, selfHeal: true}, syncOptions: [CreateNamespace=true]}\n",
		changed: true, restores: true,
	}, {
		name:    "flow resume of a pair not first writes true",
		in:      application + "  syncPolicy:\n    automated: {prune: true, enabled: false}\n",
		enabled: true,
		want:    application + "  syncPolicy:\n    automated: {prune: true, enabled: true}\n",
		changed: true, restores: true,
	}, {
		name:    "already off",
		in:      application + "  syncPolicy:\n    automated:\n      enabled: false\n",
		enabled: false,
	}, {
		name:    "already on: enabled unset",
		in:      application + "  syncPolicy:\n    automated:\n      prune: true\n",
		enabled: true,
	}, {
		name:    "already on: enabled true",
		in:      application + "  syncPolicy:\n    automated: {enabled: true}\n",
		enabled: true,
	}, {
		name:    "already on: enabled null",
		in:      application + "  syncPolicy:\n    automated:\n      enabled: null\n      prune: true\n",
		enabled: true,
	}, {
		name:   "manual: no syncPolicy",
		in:     application,
		manual: true,
	}, {
		name:    "manual: syncPolicy without automated",
		in:      application + "  syncPolicy:\n    syncOptions:\n    - CreateNamespace=true\n",
		enabled: true, manual: true,
	}, {
		name:   "manual: syncPolicy null",
		in:     application + "  syncPolicy: null\n",
		manual: true,
	}, {
		name:   "manual: automated null",
		in:     application + "  syncPolicy:\n    automated: null\n",
		manual: true,
	}, {
		name:   "manual: automated empty",
		in:     application + "  syncPolicy:\n    automated:\n    retry: {limit: 2}\n",
		manual: true,
	}, {
		name:    "manual: automated ~, resumed",
		in:      application + "  syncPolicy:\n    automated: ~\n",
		enabled: true, manual: true,
	}, {
		name: "multi-document: only the document asked for",
		in: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: guestbook\n---\n" +
			application + "  syncPolicy:\n    automated:\n      prune: true\n---\n" +
			strings.Replace(application, "guestbook", "other", 1) + "  syncPolicy:\n    automated:\n      prune: true\n",
		doc: 1,
		want: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: guestbook\n---\n" +
			application + "  syncPolicy:\n    automated:\n      enabled: false\n      prune: true\n---\n" +
			strings.Replace(application, "guestbook", "other", 1) + "  syncPolicy:\n    automated:\n      prune: true\n",
		changed: true, restores: true,
	}, {
		name:    "CRLF: the new line ends as the others",
		in:      crlf(application + "  syncPolicy:\n    automated:\n      prune: true\n"),
		want:    crlf(application + "  syncPolicy:\n    automated:\n      enabled: false\n      prune: true\n"),
		changed: true, restores: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			want := tc.want
			if want == "" {
				want = tc.in
			}
			out, changed, manual, err := manifest.SetAutomated(in, tc.doc, tc.enabled)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed || manual != tc.manual {
				t.Errorf("changed, manual = %v, %v; want %v, %v", changed, manual, tc.changed, tc.manual)
			}
			if string(out) != want {
				t.Fatalf("got\n%s\nwant\n%s", out, want)
			}
			if n := changedLines(in, out); tc.changed && n != 1 {
				t.Errorf("%d lines differ, want exactly the enabled line", n)
			}
			again, changed, _, err := manifest.SetAutomated(out, tc.doc, tc.enabled)
			if err != nil || changed || !bytes.Equal(again, out) {
				t.Errorf("the same edit again changed %v (err %v): it must be idempotent", changed, err)
			}
			if tc.restores {
				back, _, _, err := manifest.SetAutomated(out, tc.doc, !tc.enabled)
				if err != nil || !bytes.Equal(back, in) {
					t.Errorf("the opposite edit does not restore the input (err %v):\n%s", err, back)
				}
			}
		})
	}
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// TestSetAutomatedRefusals: what SetAutomated cannot edit safely it leaves
// alone, and says why.
func TestSetAutomatedRefusals(t *testing.T) {
	cases := []struct {
		name, in string
		doc      int
		enabled  bool
		// says is part of the error.
		says string
	}{
		{name: "broken YAML", in: "a: [\n", says: "did not find expected"},
		{name: "no such document", in: application, doc: 1, says: "document 1 is not an object"},
		{name: "not an Application", in: "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\nspec:\n  suspend: false\n", says: "not an Argo CD Application"},
		{name: "an ApplicationSet", in: strings.Replace(application, "kind: Application", "kind: ApplicationSet", 1), says: "not an Argo CD Application"},
		{name: "no spec", in: "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: x}\n", says: "no spec mapping"},
		{name: "syncPolicy not a mapping", in: application + "  syncPolicy: automated\n", says: "spec.syncPolicy at line 8 is not a mapping"},
		{name: "automated not a mapping", in: application + "  syncPolicy:\n    automated: true\n", says: "spec.syncPolicy.automated at line 9 is not a mapping"},
		{name: "automated an alias", in: application + "  x: &auto {prune: true}\n  syncPolicy:\n    automated: *auto\n", says: "is an alias (*auto)"},
		{name: "automated anchored", in: application + "  syncPolicy:\n    automated: &auto\n      prune: true\n", says: "is anchored (&auto)"},
		{name: "automated merges", in: application + "  syncPolicy:\n    automated:\n      <<: {enabled: true}\n      prune: true\n", says: "spec.syncPolicy.automated merges another mapping (<<) at line 10"},
		{name: "enabled twice", in: application + "  syncPolicy:\n    automated:\n      enabled: true\n      enabled: false\n", says: "spec.syncPolicy.automated.enabled is written twice, at lines 10 and 11"},
		{name: "enabled a string", in: application + "  syncPolicy:\n    automated:\n      enabled: \"false\"\n", enabled: true, says: "neither true nor false"},
		{name: "enabled yes", in: application + "  syncPolicy:\n    automated:\n      enabled: yes\n", says: "neither true nor false"},
		{name: "enabled empty", in: application + "  syncPolicy:\n    automated:\n      enabled:\n      prune: true\n", says: "has no value written"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, manual, err := manifest.SetAutomated([]byte(tc.in), tc.doc, tc.enabled)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want one that says %q", err, tc.says)
			}
			if out != nil || changed || manual {
				t.Errorf("a refusal returned %q, changed %v, manual %v", out, changed, manual)
			}
		})
	}
}
