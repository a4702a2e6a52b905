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
// but for an op of an argument set the first, a, which the case binds to
// in's view; a return becomes continue loop, and for slice functions
// return true becomes break loop.
func splice(fset *token.FileSet, src map[string][]byte, fd *ast.FuncDecl, slice bool, set *ArgSet) (string, error) {
	if r := fd.Recv.List[0].Names; len(r) != 1 || r[0].Name != "c" {
		return "", fmt.Errorf("%s: the receiver must be c", fd.Name.Name)
	}
	want := []string{"in", "pc", "n"}
	if set != nil {
		want[0] = "a"
	}
	prologue := ""
	i := 0
	for _, f := range fd.Type.Params.List {
		for _, nm := range f.Names {
			if i >= len(want) || nm.Name != want[i] && nm.Name != "_" {
				return "", fmt.Errorf("%s: parameters must be (%s, pc[, n]) or _", fd.Name.Name, want[0])
			}
			if i == 0 && nm.Name == "a" {
				prologue = "a := " + view(set) + "\n"
			}
			i++
		}
	}
	file := fset.File(fd.Pos())
	text := src[file.Name()]
	off := func(p token.Pos) int { return file.Offset(p) }
	// The returns of the body (not of function literals in it), with what
	// replaces each, in order.
	type edit struct {
		from, to int
		with     string
	}
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
	from, to := off(fd.Body.Lbrace)+1, off(fd.Body.Rbrace)
	var out bytes.Buffer
	at := from
	for _, e := range edits {
		out.Write(text[at:e.from])
		out.WriteString(e.with)
		at = e.to
	}
	out.Write(text[at:to])
	body := prologue + strings.TrimSpace(out.String())
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
