package cmd_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fleetUse is when the package's tests need each shared fleet, read from
// their source: go test runs a package's top-level tests one after
// another in the order of their files and, within a file, of their
// declarations (the package's own files first, then the _test package's),
// so once a test at position p begins, every test before p has ended, and
// a fleet whose last user is before p can stop. A test that begins with
// t.Parallel() runs after all the others: it counts as the last.
type fleetUse struct {
	// order is each top-level test's position.
	order map[string]int
	// first and last are, by fleet name, the positions of the first and
	// the last test that may use it; a fleet no test uses has neither.
	first, last map[string]int
}

// readFleetUse reads the test files of dir. A test may use a fleet when
// its body, or a function, method or package variable it names
// (transitively), names the fleet's variable (demoFleet) or has a string
// equal to the fleet's name ("demo", as onBoth("demo") or a table's
// {fleet: "demo"}): more than it uses, never less, so a fleet may stay up
// a little longer than needed, and stops only when no test to come names
// it. sharedFleets, which names every fleet, is not counted: the tests
// that range over it (scrub, sandboxCommits) read the fleets started, and
// start none. A method call counts as a call of every method of that name.
func readFleetUse(dir string, shared []*sharedFleet) (fleetUse, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return fleetUse{}, err
	}
	slices.Sort(paths)
	fset := token.NewFileSet()
	var own, ext []*ast.File // package cmd's test files, then cmd_test's
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fleetUse{}, err
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			ext = append(ext, f)
		} else {
			own = append(own, f)
		}
	}
	names := map[string]bool{} // fleet names
	for _, s := range shared {
		names[s.name] = true
	}
	// Every declaration of the _test package by the key other code names
	// it by: a function or variable by its name, a method as "."+name.
	decls := map[string][]ast.Node{}
	varFleet := map[string]string{} // demoFleet: demo
	for _, f := range ext {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil {
					key = "." + key
				}
				decls[key] = append(decls[key], d)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if !ok {
						continue
					}
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							decls[n.Name] = append(decls[n.Name], vs.Values[i])
							if name, ok := sharedFleetName(vs.Values[i]); ok {
								varFleet[n.Name] = name
							}
						}
					}
				}
			}
		}
	}
	delete(decls, "sharedFleets")
	// uses is, by declaration key, the fleets it names and the keys it
	// names, memoized.
	type uses struct {
		fleets map[string]bool
		keys   []string
	}
	direct := map[string]uses{}
	directOf := func(key string) uses {
		if u, ok := direct[key]; ok {
			return u
		}
		u := uses{fleets: map[string]bool{}}
		for _, n := range decls[key] {
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if name, ok := varFleet[n.Name]; ok {
						u.fleets[name] = true
					} else if _, ok := decls[n.Name]; ok && n.Name != key {
						u.keys = append(u.keys, n.Name)
					}
				case *ast.SelectorExpr:
					if _, ok := decls["."+n.Sel.Name]; ok {
						u.keys = append(u.keys, "."+n.Sel.Name)
					}
				case *ast.BasicLit:
					if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && names[s] {
						u.fleets[s] = true
					}
				}
				return true
			})
		}
		direct[key] = u
		return u
	}
	reach := func(key string) map[string]bool {
		fleets, seen, todo := map[string]bool{}, map[string]bool{key: true}, []string{key}
		for len(todo) > 0 {
			u := directOf(todo[0])
			todo = todo[1:]
			for f := range u.fleets {
				fleets[f] = true
			}
			for _, k := range u.keys {
				if !seen[k] {
					seen[k] = true
					todo = append(todo, k)
				}
			}
		}
		return fleets
	}
	use := fleetUse{order: map[string]int{}, first: map[string]int{}, last: map[string]int{}}
	var tests []*ast.FuncDecl
	for _, f := range append(own, ext...) {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") && fd.Name.Name != "TestMain" {
				tests = append(tests, fd)
			}
		}
	}
	for i, fd := range tests {
		if _, dup := use.order[fd.Name.Name]; dup {
			return fleetUse{}, fmt.Errorf("test %s declared twice", fd.Name.Name)
		}
		pos := i
		if beginsParallel(fd) {
			pos = len(tests)
		}
		use.order[fd.Name.Name] = pos
		for f := range reach(fd.Name.Name) {
			if _, ok := use.first[f]; !ok || pos < use.first[f] {
				use.first[f] = pos
			}
			use.last[f] = max(use.last[f], pos)
		}
	}
	return use, nil
}

// sharedFleetName is NAME of newSharedFleet("NAME").
func sharedFleetName(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "newSharedFleet" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// beginsParallel says the test's first statement is t.Parallel().
func beginsParallel(fd *ast.FuncDecl) bool {
	if fd.Body == nil || len(fd.Body.List) == 0 {
		return false
	}
	es, ok := fd.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Parallel"
}

// fleetUseHere is readFleetUse of the package's directory, the test
// binary's working directory.
func fleetUseHere() (fleetUse, error) {
	dir, err := os.Getwd()
	if err != nil {
		return fleetUse{}, err
	}
	return readFleetUse(dir, sharedFleets)
}

// fleetUse reads which tests may use a fleet as go test runs them: the
// package's own test files first, then the _test package's, each in file
// and declaration order; a fleet named by its variable, by its name in a
// table, through a helper or a method, and not through sharedFleets; a
// test that begins t.Parallel() counts as the last.
func TestFleetUseReadsWhichTestsNameAFleet(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a_test.go": `package cmd
func TestOwn(t *testing.T) {}
`,
		"b_test.go": `package cmd_test
var (
	oneFleet = newSharedFleet("one")
	twoFleet = newSharedFleet("two")
	sharedFleets = []*sharedFleet{oneFleet, twoFleet}
	table = []struct{ fleet string }{{"two"}}
)
func TestNamesOne(t *testing.T) { oneFleet.get(t) }
func TestEveryStarted(t *testing.T) { for _, s := range sharedFleets { s.started() } }
func TestTable(t *testing.T) { for _, tc := range table { onBoth(tc.fleet) } }
`,
		"c_test.go": `package cmd_test
type helper struct{}
func (helper) viaMethod(t *testing.T) { viaFunc(t) }
func viaFunc(t *testing.T) { oneFleet.get(t) }
func TestThroughAMethod(t *testing.T) { var h helper; h.viaMethod(t) }
func TestLast(t *testing.T) { t.Parallel(); onBoth("two") }
func TestNone(t *testing.T) {}
`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	use, err := readFleetUse(dir, []*sharedFleet{newSharedFleet("one"), newSharedFleet("two")})
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := map[string]int{"TestOwn": 0, "TestNamesOne": 1, "TestEveryStarted": 2, "TestTable": 3, "TestThroughAMethod": 4, "TestLast": 7, "TestNone": 6}
	for name, pos := range wantOrder {
		if got, ok := use.order[name]; !ok || got != pos {
			t.Errorf("%s at %d (%v), want %d", name, got, ok, pos)
		}
	}
	if use.first["one"] != 1 || use.last["one"] != 4 {
		t.Errorf("fleet one from %d to %d, want 1 to 4 (TestNamesOne to TestThroughAMethod)", use.first["one"], use.last["one"])
	}
	if use.first["two"] != 3 || use.last["two"] != 7 {
		t.Errorf("fleet two from %d to %d, want 3 (the table) to 7 (the parallel test, last)", use.first["two"], use.last["two"])
	}
}
