package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// An edit changes one document of a file, line by line: it finds the
// field in the parsed document, rewrites only the lines the parser says
// hold it, and parses the result again to make sure it says what was
// meant. Whatever it cannot change that way it refuses, with what to do.

// SetSuspend returns data with spec.suspend of document doc set (suspend)
// or removed (resume), and whether that changed anything. Only the bytes of
// that one field change: comments, key order, indentation, quoting and
// every other document stay as they were. A suspend adds "suspend: true"
// as the first key of spec where there is none, at spec's indentation; a
// resume removes the suspend line, or writes false where the line carries
// a comment worth keeping.
func SetSuspend(data []byte, doc int, suspend bool) ([]byte, bool, error) {
	docs, err := Decode(data)
	if err != nil {
		return nil, false, err
	}
	if err := isObject(docs, doc); err != nil {
		return nil, false, err
	}
	specField := yaml.NewRNode(docs[doc].Content[0]).Field("spec")
	if specField == nil || specField.Value.YNode().Kind != yaml.MappingNode {
		return nil, false, fmt.Errorf("the object has no spec mapping")
	}
	spec := specField.Value.YNode()
	if spec.Style&yaml.FlowStyle != 0 || len(spec.Content) == 0 {
		return nil, false, fmt.Errorf("spec is written in flow style ({...}): edit it by hand")
	}
	lines, eol := splitLines(data), eolOf(data)
	var key, value *yaml.Node
	if f := specField.Value.Field("suspend"); f != nil {
		key, value = f.Key.YNode(), f.Value.YNode()
	}
	var out []byte
	switch {
	case key == nil && !suspend:
		return data, false, nil
	case key == nil:
		line := []byte(fmt.Sprintf("%*ssuspend: true%s", spec.Content[0].Column-1, "", eol))
		// After the line of the "spec:" key (lines count from 1): above
		// the comments of its first key, which stay with that key.
		at := specField.Key.YNode().Line
		out = join(lines[:at], [][]byte{line}, lines[at:])
	default:
		if value.Kind != yaml.ScalarNode {
			return nil, false, fmt.Errorf("spec.suspend at line %d is not a scalar", value.Line)
		}
		if isTrue(value) == suspend {
			return data, false, nil
		}
		if !suspend && key.Line == value.Line && key.LineComment == "" && value.LineComment == "" && key.HeadComment == "" {
			out = join(lines[:key.Line-1], lines[key.Line:])
			break
		}
		replaced, err := replaceScalar(lines[value.Line-1], value, "spec.suspend", fmt.Sprint(suspend))
		if err != nil {
			return nil, false, err
		}
		out = join(lines[:value.Line-1], [][]byte{replaced}, lines[value.Line:])
	}
	if err := check(out, doc, suspend); err != nil {
		return nil, false, fmt.Errorf("the edit did not come out as intended (%w): edit the file by hand", err)
	}
	return out, true, nil
}

// check parses the edited stream again: same documents, and spec.suspend
// of doc as intended.
func check(data []byte, doc int, suspend bool) error {
	docs, err := Decode(data)
	if err != nil {
		return err
	}
	if doc >= len(docs) {
		return fmt.Errorf("document %d is gone", doc)
	}
	n, err := yaml.NewRNode(docs[doc].Content[0]).Pipe(yaml.Lookup("spec", "suspend"))
	if err != nil {
		return err
	}
	got := n != nil && isTrue(n.YNode())
	if got != suspend {
		return fmt.Errorf("spec.suspend reads %v", got)
	}
	return nil
}

// automatedPath is where an Argo CD Application says how it syncs.
const automatedPath = "spec.syncPolicy.automated"

// SetAutomated sets spec.syncPolicy.automated.enabled of the Application in
// document doc of data: false to suspend automated sync, true to resume it.
// An Application without spec.syncPolicy.automated syncs by hand: it is
// reported manual and left unchanged.
//
// automated.enabled is Argo CD's since 3.1 (earlier versions drop it and
// keep syncing), and unset means true. A suspend writes "enabled: false"
// as the first key of automated, on a line of its own or, in flow style,
// after the "{"; or turns a written true into false. A resume removes that
// line (that pair, in flow style) as SetSuspend removes a suspend, or
// writes true where the line carries a comment or is automated's only
// key: an empty block would be null. A null automated ("automated:",
// "automated: null") is no automated sync for Argo CD, as for kubectl
// fleet's reading of the cluster: manual. "automated: {}" is automated
// sync, on.
//
// As with SetSuspend, only the lines of the change differ. Documents that
// are not Applications, and an automated it cannot edit safely (an alias,
// an anchor, a merge, a key written twice, enabled not written as true or
// false), are refused.
func SetAutomated(data []byte, doc int, enabled bool) (after []byte, changed, manual bool, err error) {
	docs, err := Decode(data)
	if err != nil {
		return nil, false, false, err
	}
	if err := isObject(docs, doc); err != nil {
		return nil, false, false, err
	}
	if id, ok := Identify(docs[doc]); !ok || id.Group != "argoproj.io" || id.Kind != "Application" {
		return nil, false, false, fmt.Errorf("document %d is not an Argo CD Application", doc)
	}
	key, auto, err := automated(docs[doc].Content[0])
	if err != nil {
		return nil, false, false, err
	}
	if auto == nil {
		return data, false, true, nil
	}
	ek, ev, err := field(auto, automatedPath, "enabled")
	if err != nil {
		return nil, false, false, err
	}
	now, err := enabledValue(ev)
	if err != nil {
		return nil, false, false, err
	}
	if now == enabled {
		return data, false, false, nil
	}
	var out []byte
	if ek == nil {
		out, err = insertEnabled(data, key, auto)
	} else {
		out, err = setEnabled(data, auto, ek, ev, enabled)
	}
	if err != nil {
		return nil, false, false, err
	}
	if err := checkAutomated(data, out, doc, enabled); err != nil {
		return nil, false, false, fmt.Errorf("the edit did not come out as intended (%w): edit the file by hand", err)
	}
	return out, true, false, nil
}

// automated is spec.syncPolicy.automated of the object obj, its key and
// its mapping; both nil when the Application syncs by hand: no syncPolicy,
// no automated, or either null.
func automated(obj *yaml.Node) (key, value *yaml.Node, err error) {
	_, spec, err := field(obj, "", "spec")
	if err != nil {
		return nil, nil, err
	}
	if spec == nil || spec.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("the object has no spec mapping")
	}
	_, policy, err := field(spec, "spec", "syncPolicy")
	if err != nil || policy == nil || isNull(policy) {
		return nil, nil, err
	}
	if policy.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("spec.syncPolicy at line %d is not a mapping", policy.Line)
	}
	key, auto, err := field(policy, "spec.syncPolicy", "automated")
	if err != nil || auto == nil || isNull(auto) {
		return nil, nil, err
	}
	switch {
	case auto.Kind == yaml.AliasNode:
		return nil, nil, fmt.Errorf("%s at line %d is an alias (*%s): edit it by hand", automatedPath, auto.Line, auto.Value)
	case auto.Kind != yaml.MappingNode:
		return nil, nil, fmt.Errorf("%s at line %d is not a mapping", automatedPath, auto.Line)
	case auto.Anchor != "":
		return nil, nil, fmt.Errorf("%s at line %d is anchored (&%s), an edit would change its aliases too: edit it by hand", automatedPath, auto.Line, auto.Anchor)
	}
	return key, auto, nil
}

// field is the pair of key in the mapping m, at path; nil when m has none.
// A mapping that merges another (<<) or has key twice is refused: what it
// holds depends on who reads it.
// path is "" for the object itself.
func field(m *yaml.Node, path, key string) (k, v *yaml.Node, err error) {
	mapping, name := path, path+"."+key
	if path == "" {
		mapping, name = "the object", key
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch n := m.Content[i]; {
		case n.Kind == yaml.ScalarNode && (n.Tag == yaml.MergeTag || n.ShortTag() == yaml.MergeTag):
			return nil, nil, fmt.Errorf("%s merges another mapping (<<) at line %d: edit it by hand", mapping, n.Line)
		case n.Kind != yaml.ScalarNode || n.Value != key:
		case k != nil:
			return nil, nil, fmt.Errorf("%s is written twice, at lines %d and %d: edit it by hand", name, k.Line, n.Line)
		default:
			k, v = n, m.Content[i+1]
		}
	}
	return k, v, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull
}

// enabledValue is what automated.enabled, v, says: true when it is unset
// (nil or null).
func enabledValue(v *yaml.Node) (bool, error) {
	switch {
	case v == nil || isNull(v):
		return true, nil
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool":
		return isTrue(v), nil
	}
	return false, fmt.Errorf("%s.enabled at line %d is neither true nor false: edit it by hand", automatedPath, v.Line)
}

// insertEnabled writes "enabled: false" as the first key of auto, the
// value of key: on a line of its own below key in block style, after the
// "{" in flow style.
func insertEnabled(data []byte, key, auto *yaml.Node) ([]byte, error) {
	lines := splitLines(data)
	if auto.Style&yaml.FlowStyle != 0 {
		line := lines[auto.Line-1]
		at := auto.Column - 1
		if at < 0 || at >= len(line) || line[at] != '{' {
			return nil, fmt.Errorf("%s at line %d is not where the parser says", automatedPath, auto.Line)
		}
		pair := "enabled: false"
		if len(auto.Content) > 0 {
			pair += ", "
		}
		edited := join([][]byte{line[:at+1], []byte(pair), line[at+1:]})
		return join(lines[:auto.Line-1], [][]byte{edited}, lines[auto.Line:]), nil
	}
	if len(auto.Content) == 0 || auto.Content[0].Line <= key.Line {
		return nil, fmt.Errorf("%s at line %d is not laid out as a block: edit it by hand", automatedPath, key.Line)
	}
	line := []byte(fmt.Sprintf("%*senabled: false%s", auto.Content[0].Column-1, "", eolOf(data)))
	// After the line of the "automated:" key, as SetSuspend below "spec:".
	return join(lines[:key.Line], [][]byte{line}, lines[key.Line:]), nil
}

// setEnabled changes the written enabled of auto, the pair ek: ev. A
// resume removes the pair where that leaves nothing behind: a line of its
// own with no comment in block style, the first pair in flow style; else,
// and for a suspend, it rewrites the value.
func setEnabled(data []byte, auto, ek, ev *yaml.Node, enabled bool) ([]byte, error) {
	lines := splitLines(data)
	alone := ek.Line == ev.Line && ek.LineComment == "" && ev.LineComment == "" && ek.HeadComment == ""
	flow := auto.Style&yaml.FlowStyle != 0
	line := lines[ev.Line-1]
	switch {
	case enabled && alone && !flow && len(auto.Content) > 2:
		return join(lines[:ek.Line-1], lines[ek.Line:]), nil
	case enabled && alone && flow && auto.Content[0] == ek && ek.Line == auto.Line:
		start := ek.Column - 1
		_, end, err := scalarAt(line, ev, automatedPath+".enabled")
		if err != nil {
			return nil, err
		}
		if len(auto.Content) > 2 {
			rest := bytes.TrimLeft(line[end:], " \t")
			if len(rest) == 0 || rest[0] != ',' {
				break // not as written by a suspend: rewrite the value
			}
			end = len(line) - len(bytes.TrimLeft(rest[1:], " \t"))
		}
		if start < 0 || start > end {
			break
		}
		edited := join([][]byte{line[:start], line[end:]})
		return join(lines[:ev.Line-1], [][]byte{edited}, lines[ev.Line:]), nil
	}
	if ev.Value == "" {
		return nil, fmt.Errorf("%s.enabled at line %d has no value written: edit it by hand", automatedPath, ev.Line)
	}
	replaced, err := replaceScalar(line, ev, automatedPath+".enabled", fmt.Sprint(enabled))
	if err != nil {
		return nil, err
	}
	return join(lines[:ev.Line-1], [][]byte{replaced}, lines[ev.Line:]), nil
}

// checkAutomated parses both streams again: the same documents, but for
// automated.enabled of doc, which reads as intended.
func checkAutomated(before, after []byte, doc int, enabled bool) error {
	was, err := Decode(before)
	if err != nil {
		return err
	}
	is, err := Decode(after)
	if err != nil {
		return err
	}
	if len(is) != len(was) {
		return fmt.Errorf("%d documents became %d", len(was), len(is))
	}
	for i := range was {
		var a, b any
		if err := was[i].Decode(&a); err != nil {
			return err
		}
		if err := is[i].Decode(&b); err != nil {
			return err
		}
		if i == doc {
			autoA, err := automatedValue(a)
			if err != nil {
				return err
			}
			autoB, err := automatedValue(b)
			if err != nil {
				return err
			}
			got := true
			if v, ok := autoB["enabled"]; ok && v != nil {
				if got, ok = v.(bool); !ok {
					return fmt.Errorf("%s.enabled reads %v", automatedPath, v)
				}
			}
			if got != enabled {
				return fmt.Errorf("%s.enabled reads %v", automatedPath, got)
			}
			delete(autoA, "enabled")
			delete(autoB, "enabled")
		}
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("document %d changed beyond %s.enabled", i, automatedPath)
		}
	}
	return nil
}

// automatedValue is spec.syncPolicy.automated of a decoded object, which
// must be a mapping.
func automatedValue(obj any) (map[string]any, error) {
	v := obj
	for _, k := range []string{"spec", "syncPolicy", "automated"} {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s reads as no mapping", automatedPath)
		}
		v = m[k]
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s reads as %v, not a mapping", automatedPath, v)
	}
	return m, nil
}

// isObject says why document doc of docs is not an object, if it is not.
func isObject(docs []*yaml.Node, doc int) error {
	if doc < 0 || doc >= len(docs) || docs[doc].Kind != yaml.DocumentNode || len(docs[doc].Content) != 1 {
		return fmt.Errorf("document %d is not an object", doc)
	}
	return nil
}

func isTrue(n *yaml.Node) bool {
	switch n.Value {
	case "true", "True", "TRUE":
		return true
	}
	return false
}

// replaceScalar replaces the scalar n, the field at path, on its line with
// value, plain.
func replaceScalar(line []byte, n *yaml.Node, path, value string) ([]byte, error) {
	start, end, err := scalarAt(line, n, path)
	if err != nil {
		return nil, err
	}
	return join([][]byte{line[:start], []byte(value), line[end:]}), nil
}

// scalarAt is where on its line the scalar n, the field at path, is
// written: plain or quoted, on that one line.
func scalarAt(line []byte, n *yaml.Node, path string) (start, end int, err error) {
	start = n.Column - 1
	if start < 0 || start >= len(line) {
		return 0, 0, fmt.Errorf("%s at line %d is not where the parser says", path, n.Line)
	}
	switch q := line[start]; q {
	case '"', '\'':
		i := bytes.IndexByte(line[start+1:], q)
		if i < 0 {
			return 0, 0, fmt.Errorf("%s at line %d spans lines: edit it by hand", path, n.Line)
		}
		end = start + 1 + i + 1
	default:
		end = start + len(n.Value)
		if end > len(line) || string(line[start:end]) != n.Value {
			return 0, 0, fmt.Errorf("%s at line %d is not written as parsed", path, n.Line)
		}
	}
	return start, end, nil
}

// eolOf is the line ending of data: CRLF where it has any, else LF.
func eolOf(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// splitLines splits data after each newline, keeping it.
func splitLines(data []byte) [][]byte {
	return bytes.SplitAfter(data, []byte("\n"))
}

func join(parts ...[][]byte) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		for _, l := range p {
			b.Write(l)
		}
	}
	return b.Bytes()
}

// Decode parses every document of a YAML stream, keeping the positions of
// its nodes in the stream.
func Decode(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		doc := &yaml.Node{}
		err := dec.Decode(doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// Object identifies a manifest: the API group (not the version: a
// manifest may declare another served version), kind, namespace and name.
type Object struct {
	Group, Kind, Namespace, Name string
}

func (o Object) String() string {
	g := o.Group
	if g != "" {
		g = "." + g
	}
	if o.Namespace == "" {
		return o.Kind + g + " " + o.Name
	}
	return o.Kind + g + " " + o.Namespace + "/" + o.Name
}

// Identify reads what a document declares; ok is false for a document
// that is not a Kubernetes object.
func Identify(doc *yaml.Node) (Object, bool) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Object{}, false
	}
	rn := yaml.NewRNode(doc.Content[0])
	str := func(p ...string) string {
		n, err := rn.Pipe(yaml.Lookup(p...))
		if err != nil || n == nil || n.YNode().Kind != yaml.ScalarNode {
			return ""
		}
		return n.YNode().Value
	}
	apiVersion, kind, name := str("apiVersion"), str("kind"), str("metadata", "name")
	if apiVersion == "" || kind == "" || name == "" {
		return Object{}, false
	}
	group := ""
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		group = g
	}
	return Object{Group: group, Kind: kind, Namespace: str("metadata", "namespace"), Name: name}, true
}
