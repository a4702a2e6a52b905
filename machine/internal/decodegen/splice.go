package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Markers of the generated dispatch inside the interpreter loop.
const (
	beginMarker = "// decodegen:dispatch begin"
	endMarker   = "// decodegen:dispatch end"
)

// Dispatch rewrites the region between the markers in the file at path
// (the interpreter loop, labelled loop) with a switch that runs the hot
// instructions' execute functions spliced in, and execute for the rest:
// Go does not inline their functions into a loop that size, and a call
// per instruction is most of an interpreted instruction's cost. The
// execute functions are read from the other files of path's package.
func (t *Table) Dispatch(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	b, e := bytes.Index(src, []byte(beginMarker)), bytes.Index(src, []byte(endMarker))
	if b < 0 || e < b {
		return nil, fmt.Errorf("%s: no %q ... %q region", path, beginMarker, endMarker)
	}
	funcs, fset, srcs, err := methods(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	var sw bytes.Buffer
	sw.WriteString(beginMarker + "\n")
	sw.WriteString("// Generated from a64.decode: the hot instructions' execute functions,\n")
	sw.WriteString("// spliced in (returns become continue loop or break loop), then\n")
	sw.WriteString("// execute for every other.\n")
	sw.WriteString("switch in.op {\n")
	for _, op := range t.Ops {
		if !op.Hot {
			continue
		}
		fd := funcs[op.Exec]
		if fd == nil {
			return nil, fmt.Errorf("%s: exec %s not found", op.Name, op.Exec)
		}
		body, err := splice(fset, srcs, fd, op.Slice, op.Set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.Name, err)
		}
		fmt.Fprintf(&sw, "case op%s: // %s\n%s\n", op.Name, op.Exec, body)
	}
	sw.WriteString("default:\nif c.execute(in, pc, n) {\nbreak loop\n}\n}\n")
	out := append([]byte{}, src[:b]...)
	out = append(out, sw.Bytes()...)
	out = append(out, src[e:]...)
	return gofmt(out)
}

// methods parses the package in dir (but its tests and generated files)
// and returns its *CPU methods by name.
func methods(dir string) (map[string]*ast.FuncDecl, *token.FileSet, map[string][]byte, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list %s: %w", dir, err)
	}
	funcs := map[string]*ast.FuncDecl{}
	srcs := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("read: %w", err)
		}
		srcs[f] = text
		file, err := parser.ParseFile(fset, f, text, parser.ParseComments)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("parse: %w", err)
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Body != nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	return funcs, fset, srcs, nil
}

// splice returns fd's body as statements of a case of the loop: its
// parameters must be named as the loop's variables (c, in, pc, n) or _,
// but for an op of an argument set the first, a, whose uses read in's
// slots directly (inlineView); a return becomes continue loop, and for
// slice functions return true becomes break loop.
func splice(fset *token.FileSet, src map[string][]byte, fd *ast.FuncDecl, slice bool, set *ArgSet) (string, error) {
	if r := fd.Recv.List[0].Names; len(r) != 1 || r[0].Name != "c" {
		return "", fmt.Errorf("%s: the receiver must be c", fd.Name.Name)
	}
	want := []string{"in", "pc", "n"}
	if set != nil {
		want[0] = "a"
	}
	i := 0
	for _, f := range fd.Type.Params.List {
		for _, nm := range f.Names {
			if i >= len(want) || nm.Name != want[i] && nm.Name != "_" {
				return "", fmt.Errorf("%s: parameters must be (%s, pc[, n]) or _", fd.Name.Name, want[0])
			}
			if i == 0 && nm.Name == "a" {
				var err error
				if fset, src, fd, err = inlineView(fset, src, fd, set); err != nil {
					return "", err
				}
			}
			i++
		}
	}
	file := fset.File(fd.Pos())
	text := src[file.Name()]
	off := func(p token.Pos) int { return file.Offset(p) }
	// The returns of the body (not of function literals in it), with what
	// replaces each, in order.
	var edits []edit
	var bad error
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			var with string
			switch {
			case len(n.Results) == 0 && !slice:
				with = "continue loop"
			case len(n.Results) == 1 && slice && isIdent(n.Results[0], "false"):
				with = "continue loop"
			case len(n.Results) == 1 && slice && isIdent(n.Results[0], "true"):
				with = "break loop"
			case len(n.Results) == 1 && slice:
				r := n.Results[0]
				with = "if " + string(text[off(r.Pos()):off(r.End())]) + " {\nbreak loop\n}\ncontinue loop"
			default:
				bad = fmt.Errorf("%s: a return the loop cannot take", fd.Name.Name)
			}
			edits = append(edits, edit{off(n.Pos()), off(n.End()), with})
		}
		return true
	})
	if bad != nil {
		return "", bad
	}
	var out bytes.Buffer
	applyEdits(&out, text, off(fd.Body.Lbrace)+1, off(fd.Body.Rbrace), edits)
	body := strings.TrimSpace(out.String())
	// A continue at the very end is where the case ends anyway.
	body = strings.TrimSpace(strings.TrimSuffix(body, "continue loop"))
	if _, err := format.Source([]byte("package p\nfunc f() {\nloop:\nfor {\n" + body + "\n}\n}\n")); err != nil {
		return "", fmt.Errorf("%s: spliced body does not parse: %w", fd.Name.Name, err)
	}
	return body, nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// inlineView rewrites fd, an execute function of set's ops whose first
// parameter is a, into one of in: a.OPERAND() becomes in.SLOT (converted
// to the operand's type), a.FIELD in.FIELD, and any other use of a
// (*SETArgs)(in). It returns the new function, parsed, with the file set
// and sources that hold it. Why: Go inlines little into a function past
// 5,000 nodes, and runFast with a method call per operand read crosses
// that; its cases then call pollIRQ, link and the like instead of
// inlining them, which costs CoreMark about 10%.
func inlineView(fset *token.FileSet, src map[string][]byte, fd *ast.FuncDecl, set *ArgSet) (*token.FileSet, map[string][]byte, *ast.FuncDecl, error) {
	file := fset.File(fd.Pos())
	text := src[file.Name()]
	off := func(p token.Pos) int { return file.Offset(p) }
	var edits []edit
	var bad error
	fieldNames := map[*ast.Ident]bool{} // x.a: a is a field, not the parameter
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || !isIdent(sel.X, "a") {
				return true
			}
			o := set.operand(sel.Sel.Name)
			if o == nil || len(n.Args) != 0 {
				return true
			}
			v := "in." + o.Slot
			if o.Type != slotTypes[o.Slot] {
				v = o.Type + "(" + v + ")"
			}
			edits = append(edits, edit{off(n.Pos()), off(n.End()), v})
			return false
		case *ast.SelectorExpr:
			if isIdent(n.X, "a") && instFields[n.Sel.Name] {
				edits = append(edits, edit{off(n.X.Pos()), off(n.X.End()), "in"})
				return false
			}
			fieldNames[n.Sel] = true
		case *ast.FuncLit:
			for _, f := range n.Type.Params.List {
				for _, nm := range f.Names {
					if nm.Name == "a" {
						bad = fmt.Errorf("%s: a function literal's parameter shadows a", fd.Name.Name)
					}
				}
			}
		case *ast.Ident:
			if n.Name == "a" && !fieldNames[n] {
				edits = append(edits, edit{off(n.Pos()), off(n.End()), view(set)})
			}
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if isIdent(l, "a") && n.Tok == token.DEFINE {
					bad = fmt.Errorf("%s: a local variable shadows a", fd.Name.Name)
				}
			}
		}
		return true
	})
	if bad != nil {
		return nil, nil, nil, bad
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from < edits[j].from })
	var out bytes.Buffer
	out.WriteString("package p\n\nfunc (c *CPU) " + fd.Name.Name + "(in *inst")
	rest := fd.Type.Params.List[0]
	if len(rest.Names) > 1 { // (a, b *T) cannot be: a's type is its own
		return nil, nil, nil, fmt.Errorf("%s: a shares its type with another parameter", fd.Name.Name)
	}
	params := fd.Type.Params
	from := off(rest.End())
	out.Write(text[from:off(params.Closing)])
	out.WriteString(")")
	if fd.Type.Results != nil {
		out.WriteString(" " + string(text[off(fd.Type.Results.Pos()):off(fd.Type.Results.End())]))
	}
	out.WriteString(" ")
	applyEdits(&out, text, off(fd.Body.Pos()), off(fd.Body.End()), edits)
	out.WriteString("\n")
	nfset := token.NewFileSet()
	name := file.Name() + ":" + fd.Name.Name
	nf, err := parser.ParseFile(nfset, name, out.Bytes(), 0)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: the view inlined does not parse: %w", fd.Name.Name, err)
	}
	return nfset, map[string][]byte{name: out.Bytes()}, nf.Decls[0].(*ast.FuncDecl), nil
}

// edit replaces text[from:to] of a source with with.
type edit struct {
	from, to int
	with     string
}

// applyEdits writes text[from:to] to out with edits, which are in order
// and inside it, applied.
func applyEdits(out *bytes.Buffer, text []byte, from, to int, edits []edit) {
	at := from
	for _, e := range edits {
		out.Write(text[at:e.from])
		out.WriteString(e.with)
		at = e.to
	}
	out.Write(text[at:to])
}
