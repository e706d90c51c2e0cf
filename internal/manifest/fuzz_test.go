package manifest

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzSetSuspend: the git write path's edit of a manifest from the
// checkout either refuses it or changes spec.suspend of that document
// alone, so that reading it back says what was written. Never a panic.
func FuzzSetSuspend(f *testing.F) {
	for _, s := range []string{
		"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\nspec:\n  interval: 10m # keep\n  path: ./apps\n",
		"---\nkind: A\nspec:\n  suspend: true # why\n---\nkind: B\nspec: {x: 1}\n",
		"spec:\n\tbad: indent\n",
		"a: &a [*a]\n",
	} {
		f.Add([]byte(s), 0, true)
		f.Add([]byte(s), 1, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, doc int, suspend bool) {
		out, _, err := SetSuspend(data, doc, suspend)
		if err != nil {
			return
		}
		if err := check(out, doc, suspend); err != nil {
			t.Fatalf("SetSuspend(%q, %d, %v) wrote %q, which reads back wrong: %v", data, doc, suspend, out, err)
		}
	})
}

// FuzzSetAutomated: the edit of an Argo CD Application either refuses it,
// reports it manual and leaves it, or leaves it as it is because it already
// says what was asked, or changes it so that it reads back as asked, with
// every line outside its spec.syncPolicy.automated mapping byte for byte as
// it was. Never a panic.
func FuzzSetAutomated(f *testing.F) {
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: guestbook\n  namespace: argocd\nspec:\n  project: default\n"
	for _, s := range []string{
		app + "  syncPolicy:\n    automated:\n      prune: true # keep\n      selfHeal: true\n    syncOptions:\n    - CreateNamespace=true\n",
		app + "  syncPolicy:\n    automated: {}\n",
		app + "  syncPolicy: {automated: {enabled: false, prune: true}}\n",
		app + "  syncPolicy:\n    automated:\n      enabled: false # why\n",
		app + "  syncPolicy:\n    automated: null\n",
		"kind: Kustomization\n---\r\n" + strings.ReplaceAll(app+"  syncPolicy:\n    automated:\n      enabled: true\n      prune: true\n", "\n", "\r\n"),
		"a: &a [*a]\n",
	} {
		f.Add([]byte(s), 0, false)
		f.Add([]byte(s), 1, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, doc int, enabled bool) {
		out, changed, manual, err := SetAutomated(data, doc, enabled)
		if err != nil {
			return
		}
		if !changed {
			if !bytes.Equal(out, data) {
				t.Fatalf("SetAutomated(%q, %d, %v) reports no change but wrote %q", data, doc, enabled, out)
			}
			was, ok := readAutomated(data, doc)
			switch {
			case !ok:
			case manual && was != nil:
				t.Fatalf("SetAutomated(%q, %d, %v) reports manual an Application whose automated.enabled reads %v", data, doc, enabled, *was)
			case !manual && (was == nil || *was != enabled):
				t.Fatalf("SetAutomated(%q, %d, %v) changed nothing, but automated.enabled did not read %v", data, doc, enabled, enabled)
			}
			return
		}
		if manual {
			t.Fatalf("SetAutomated(%q, %d, %v) changed a manual Application", data, doc, enabled)
		}
		is, ok := readAutomated(out, doc)
		if !ok || is == nil || *is != enabled {
			t.Fatalf("SetAutomated(%q, %d, %v) wrote %q, which does not read back as asked", data, doc, enabled, out)
		}
		first, last := automatedLines(t, data, doc)
		a, b := splitLines(data), splitLines(out)
		p := 0
		for p < len(a) && p < len(b) && bytes.Equal(a[p], b[p]) {
			p++
		}
		s := 0
		for s < len(a)-p && s < len(b)-p && bytes.Equal(a[len(a)-1-s], b[len(b)-1-s]) {
			s++
		}
		if p < first-1 || len(a)-s > last {
			t.Fatalf("SetAutomated(%q, %d, %v) wrote %q: lines %d to %d changed, outside automated (lines %d to %d)", data, doc, enabled, out, p+1, len(a)-s, first, last)
		}
	})
}

// readAutomated reads spec.syncPolicy.automated.enabled of document doc
// as a Kubernetes client does, decoded: nil when the Application syncs by
// hand; ok is false when the document does not decode.
func readAutomated(data []byte, doc int) (enabled *bool, ok bool) {
	docs, err := Decode(data)
	if err != nil || doc < 0 || doc >= len(docs) {
		return nil, false
	}
	var v any
	if err := docs[doc].Decode(&v); err != nil {
		return nil, false
	}
	for _, k := range []string{"spec", "syncPolicy", "automated"} {
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, v == nil
		}
		v = m[k]
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, v == nil
	}
	on := true
	if e, set := m["enabled"]; set && e != nil {
		b, isBool := e.(bool)
		if !isBool {
			return nil, false
		}
		on = b
	}
	return &on, true
}

// automatedLines are the first and last lines (from 1) of
// spec.syncPolicy.automated of document doc: its key's and the last of
// any node below it.
func automatedLines(t *testing.T, data []byte, doc int) (first, last int) {
	t.Helper()
	docs, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var key *yaml.Node
	n := docs[doc].Content[0]
	for _, k := range []string{"spec", "syncPolicy", "automated"} {
		key, n = valueOf(n, k)
		if n == nil {
			t.Fatalf("%q has no %s", data, k)
		}
	}
	return key.Line, lastLine(n)
}

// valueOf is the first pair of key k in the mapping m; nils when none.
func valueOf(m *yaml.Node, k string) (key, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func lastLine(n *yaml.Node) int {
	last := n.Line
	for _, c := range n.Content {
		last = max(last, lastLine(c))
	}
	return last
}
