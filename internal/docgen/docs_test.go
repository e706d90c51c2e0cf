package docgen_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repo is the repository's root, from this package's directory.
var repo = filepath.Join("..", "..")

var (
	fenceRE   = regexp.MustCompile("(?ms)^[ \t]*(?:```|~~~).*?\n[ \t]*(?:```|~~~)[ \t]*$")
	codeRE    = regexp.MustCompile("`[^`\n]*`")
	linkRE    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$`)
	htmlIDRE  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	// headingLinkRE is a link in a heading, whose text alone is its anchor.
	headingLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

	// What a page for users never says: how the project is developed.
	devTalk = map[string]*regexp.Regexp{
		"an issue number":  regexp.MustCompile(`(?i)\bissue \d`),
		"a seed number":    regexp.MustCompile(`(?i)\bseed 00`),
		"a commit hash":    regexp.MustCompile(`(?:^|[^0-9a-fA-F:])[0-9a-f]{40}(?:[^0-9a-fA-F]|$)`),
		"a Go test's name": regexp.MustCompile(`\bTest[A-Z]`),
	}
)

// page is a Markdown file of the repository.
type page struct {
	path string // from the repository's root, slash-separated
	text string
}

// pages are README.md and every page of docs/, reference/ included.
func pages(t *testing.T) []page {
	t.Helper()
	paths := []string{"README.md"}
	for _, glob := range []string{"docs/*.md", "docs/reference/*.md"} {
		m, err := filepath.Glob(filepath.Join(repo, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(repo, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
	}
	out := make([]page, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(repo, p))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page{path: p, text: string(data)})
	}
	return out
}

// prose is text without its code: fenced blocks and inline code.
func prose(text string) string {
	return codeRE.ReplaceAllString(fenceRE.ReplaceAllString(text, ""), "")
}

// anchors are the anchors of a page's headings, as GitHub makes them.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(text, ""), -1) {
		title := strings.NewReplacer("`", "", "*", "").Replace(m[1])
		title = headingLinkRE.ReplaceAllString(title, "$1")
		slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(title), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlIDRE.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// Every relative link of README.md and docs/ leads to a file that exists,
// and every #anchor to a heading of its page.
func TestDocsLinksResolve(t *testing.T) {
	all := pages(t)
	byPath := map[string]page{}
	for _, p := range all {
		byPath[p.path] = p
	}
	checked := 0
	for _, p := range all {
		for _, m := range linkRE.FindAllStringSubmatch(prose(p.text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			resolved := p.path
			if file != "" {
				resolved = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(p.path), file)))
				if _, err := os.Stat(filepath.Join(repo, resolved)); err != nil {
					t.Errorf("%s: link %s: no file %s", p.path, target, resolved)
					continue
				}
			}
			checked++
			if anchor == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			to, ok := byPath[resolved]
			if !ok {
				data, err := os.ReadFile(filepath.Join(repo, resolved))
				if err != nil {
					t.Fatal(err)
				}
				to = page{path: resolved, text: string(data)}
			}
			if !anchors(to.text)[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", p.path, target, resolved, anchor)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d links checked: is the link pattern right?", checked)
	}
}

// userPages are the pages docs/README.md lists for users, README.md and
// the generated reference; it fails when a page of docs/ is listed in
// neither section of the index, or in both.
func userPages(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	index := string(data)
	users, contributors, ok := strings.Cut(index, "\n## For contributors")
	_, users, ok2 := strings.Cut(users, "\n## For users")
	if !ok || !ok2 {
		t.Fatal("docs/README.md has no sections ## For users and ## For contributors")
	}
	listed := func(section string) map[string]bool {
		out := map[string]bool{}
		for _, m := range linkRE.FindAllStringSubmatch(section, -1) {
			file, _, _ := strings.Cut(m[1], "#")
			if file != "" && !strings.Contains(file, "://") {
				out[filepath.ToSlash(filepath.Clean(filepath.Join("docs", file)))] = true
			}
		}
		return out
	}
	u, c := listed(users), listed(contributors)
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		p := "docs/" + filepath.Base(d)
		if u[p] == c[p] {
			t.Errorf("docs/README.md lists %s in %s", p, map[bool]string{true: "both sections", false: "neither section"}[u[p]])
		}
	}
	if len(c) < 5 {
		t.Errorf("docs/README.md lists %d contributor pages; want design, providers, sandbox, testing, benchmarks at least", len(c))
	}
	u["README.md"] = true
	refs, _ := filepath.Glob(filepath.Join(repo, "docs", "reference", "*.md"))
	for _, r := range refs {
		u["docs/reference/"+filepath.Base(r)] = true
	}
	return u
}

// Pages for users speak to users: no issue or seed numbers, commit
// hashes or test names.
func TestUserPagesSayNothingOfTheProject(t *testing.T) {
	users := userPages(t)
	n := 0
	for _, p := range pages(t) {
		if !users[p.path] {
			continue
		}
		n++
		for i, line := range strings.Split(p.text, "\n") {
			for what, re := range devTalk {
				// A Flux revision (main@sha1:…) is output, not a commit of ours.
				if re.MatchString(strings.ReplaceAll(line, "sha1:", "sha1-")) && !strings.Contains(line, "@sha1:") {
					t.Errorf("%s:%d names %s: %s", p.path, i+1, what, strings.TrimSpace(line))
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d user pages: does docs/README.md list them?", n)
	}
}

// The README begins with the two commands a newcomer types: make demo and
// make test, before any section.
func TestReadmeBeginsWithTheTwoCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	block := fenceRE.FindStringIndex(text)
	if block == nil {
		t.Fatal("README.md has no code block")
	}
	if h := strings.Index(text, "\n## "); h >= 0 && h < block[0] {
		t.Errorf("README.md has a section before its first code block")
	}
	var cmds []string
	for _, line := range strings.Split(text[block[0]:block[1]], "\n")[1:] {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "```") {
			cmds = append(cmds, line)
		}
	}
	if !slices.Equal(cmds, []string{"make demo", "make test"}) {
		t.Errorf("README.md's first commands are %q; want make demo, then make test", cmds)
	}
}
