package kernel

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Param is one formal parameter of a guest function, from DWARF.
type Param struct {
	Name string
	Type string // C type as DWARF names it, e.g. "unsigned long", "struct file *"
	Size int64  // bytes
}

// funcParams caches the parameters of every subprogram in the image.
type funcParams struct {
	once  sync.Once
	dw    *dwarf.Data
	funcs map[string][]Param
	err   error
}

func newFuncParams(dw *dwarf.Data, err error) *funcParams {
	return &funcParams{dw: dw, err: err}
}

// readDWARF parses the image's DWARF (with an elf.File of its own: Boot
// goes on with its) for task and params.
func (k *Kernel) readDWARF(img io.ReaderAt) {
	dw, err := imageDWARF(img)
	k.task = readTaskLayout(dw)
	k.params = newFuncParams(dw, err)
}

// taskStruct is where task_struct's fields are, once readDWARF has read
// them.
func (k *Kernel) taskStruct() *taskLayout {
	k.dwarf.Wait()
	return &k.task
}

// load walks the DWARF once and records each function's parameters.
func (fp *funcParams) load() {
	if fp.err != nil {
		return
	}
	fp.funcs = make(map[string][]Param)
	r := fp.dw.Reader()
	var cur string
	var params []Param
	inFunc := false
	flush := func() {
		if inFunc && cur != "" {
			if _, seen := fp.funcs[cur]; !seen {
				fp.funcs[cur] = params
			}
		}
		inFunc, cur, params = false, "", nil
	}
	depth := 0
	funcDepth := -1
	for {
		e, err := r.Next()
		if err != nil {
			fp.err = fmt.Errorf("reading DWARF: %w", err)
			return
		}
		if e == nil {
			break
		}
		if e.Tag == 0 { // end of children
			depth--
			if depth == funcDepth {
				flush()
				funcDepth = -1
			}
			continue
		}
		switch {
		case e.Tag == dwarf.TagSubprogram:
			flush()
			name, _ := e.Val(dwarf.AttrName).(string)
			if _, decl := e.Val(dwarf.AttrDeclaration).(bool); !decl && name != "" {
				cur, inFunc = name, true
				if !e.Children {
					flush()
				} else {
					funcDepth = depth
				}
			}
		case e.Tag == dwarf.TagFormalParameter && inFunc && depth == funcDepth+1:
			p := Param{}
			p.Name, _ = e.Val(dwarf.AttrName).(string)
			if off, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
				if t, err := fp.dw.Type(off); err == nil {
					p.Type, p.Size = cType(t), t.Size()
				}
			}
			params = append(params, p)
		}
		if e.Children {
			depth++
		}
	}
	flush()
}

// FuncParams returns the formal parameters of the guest function name, in
// order, from the image's DWARF.
func (k *Kernel) FuncParams(name string) ([]Param, error) {
	k.dwarf.Wait()
	fp := k.params
	fp.once.Do(fp.load)
	if err := fp.err; err != nil {
		if !errors.Is(err, ErrBadImage) { // (imageDWARF's say so already)
			err = fmt.Errorf("%w: %w", ErrBadImage, err)
		}
		return nil, err
	}
	ps, ok := fp.funcs[name]
	if !ok {
		return nil, fmt.Errorf("no DWARF for function %q", name)
	}
	return ps, nil
}

// cType spells a DWARF type as C does ("struct file *", "const char *");
// debug/dwarf's String uses Go's order.
func cType(t dwarf.Type) string {
	switch t := t.(type) {
	case *dwarf.PtrType:
		if _, void := t.Type.(*dwarf.VoidType); void || t.Type == nil {
			return "void *"
		}
		inner := cType(t.Type)
		if inner[len(inner)-1] == '*' {
			return inner + "*"
		}
		return inner + " *"
	case *dwarf.QualType:
		return t.Qual + " " + cType(t.Type)
	case *dwarf.TypedefType:
		return t.Name
	case *dwarf.StructType:
		return t.Kind + " " + t.StructName
	case *dwarf.EnumType:
		return "enum " + t.EnumName
	}
	return t.String()
}
