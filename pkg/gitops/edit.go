package gitops

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SetSuspend returns data with spec.suspend of document doc set (suspend)
// or removed (resume), and whether that changed anything. Only the bytes of
// that one field change: comments, key order, indentation, quoting and
// every other document stay as they were. A suspend adds "suspend: true"
// as the first key of spec where there is none, at spec's indentation; a
// resume removes the suspend line, or writes false where the line carries
// a comment worth keeping.
func SetSuspend(data []byte, doc int, suspend bool) ([]byte, bool, error) {
	docs, err := decode(data)
	if err != nil {
		return nil, false, err
	}
	if doc < 0 || doc >= len(docs) || docs[doc].Kind != yaml.DocumentNode || len(docs[doc].Content) != 1 {
		return nil, false, fmt.Errorf("document %d is not an object", doc)
	}
	specField := yaml.NewRNode(docs[doc].Content[0]).Field("spec")
	if specField == nil || specField.Value.YNode().Kind != yaml.MappingNode {
		return nil, false, fmt.Errorf("the object has no spec mapping")
	}
	spec := specField.Value.YNode()
	if spec.Style&yaml.FlowStyle != 0 || len(spec.Content) == 0 {
		return nil, false, fmt.Errorf("spec is written in flow style ({...}): edit it by hand")
	}
	lines := splitLines(data)
	eol := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		eol = "\r\n"
	}
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
		replaced, err := replaceScalar(lines[value.Line-1], value, fmt.Sprint(suspend))
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

func isTrue(n *yaml.Node) bool {
	switch n.Value {
	case "true", "True", "TRUE":
		return true
	}
	return false
}

// replaceScalar replaces the scalar n on its line with value, plain.
func replaceScalar(line []byte, n *yaml.Node, value string) ([]byte, error) {
	start := n.Column - 1
	if start < 0 || start >= len(line) {
		return nil, fmt.Errorf("spec.suspend at line %d is not where the parser says", n.Line)
	}
	var end int
	switch q := line[start]; q {
	case '"', '\'':
		i := bytes.IndexByte(line[start+1:], q)
		if i < 0 {
			return nil, fmt.Errorf("spec.suspend at line %d spans lines: edit it by hand", n.Line)
		}
		end = start + 1 + i + 1
	default:
		end = start + len(n.Value)
		if end > len(line) || string(line[start:end]) != n.Value {
			return nil, fmt.Errorf("spec.suspend at line %d is not written as parsed", n.Line)
		}
	}
	return join([][]byte{line[:start], []byte(value), line[end:]}), nil
}

// check parses the edited stream again: same documents, and spec.suspend
// of doc as intended.
func check(data []byte, doc int, suspend bool) error {
	docs, err := decode(data)
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
