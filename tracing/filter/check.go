package filter

import (
	"strconv"
	"strings"
	"syscall"
)

// Linux's filter syntax checks, ported from kernel/trace/trace_events_filter.c
// (6.1): calc_stack(), the first pass of predicate_parse() and
// parse_pred(). They decide which error a bad filter gets, where the caret
// goes and which errno the writer sees (Linux returns calc_stack's
// negative codes as they are: -EPERM, -ENOENT, -ESRCH). The filter itself
// is then built by Parse.

// Err is a FILT_ERR_* code; its String is Linux's err_text[].
type Err int

const (
	ErrNone Err = iota
	ErrInvalidOp
	ErrTooManyOpen
	ErrTooManyClose
	ErrMissingQuote
	ErrOperandTooLong
	ErrExpectString
	ErrExpectDigit
	ErrIllegalFieldOp
	ErrFieldNotFound
	ErrIllegalIntval
	ErrBadSubsysFilter
	ErrTooManyPreds
	ErrInvalidFilter
	ErrIPFieldOnly
	ErrInvalidValue
	ErrErrno
	ErrNoFilter
)

var errText = [...]string{
	"No error",
	"Invalid operator",
	"Too many '('",
	"Too few '('",
	"Missing matching quote",
	"Operand too long",
	"Expecting string field",
	"Expecting numeric field",
	"Illegal operation for field type",
	"Field not found",
	"Illegal integer value",
	"Couldn't find or set field in one of a subsystem's events",
	"Too many terms in predicate expression",
	"Meaningless filter expression",
	"Only 'ip' field is supported for function trace",
	"Invalid value (did you forget quotes)?",
	"Error",
	"No filter found",
}

// String is the error's text in error_log and the filter file.
func (e Err) String() string { return errText[e] }

// ParseError is struct filter_parse_error plus the errno returned.
type ParseError struct {
	Code  Err // ErrNone: no parse error recorded ("Error: (0)")
	Pos   int
	Errno syscall.Errno
}

// Field is what parse_pred needs to know of a field.
type Field struct {
	Str    bool // a string field (else a number)
	Signed bool
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// at is str[i] with C's terminating NUL.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// Check returns Linux's verdict on filter s over fields, nil if it
// parses.
func Check(s string, fields map[string]Field) *ParseError {
	if pe := calcStack(s); pe != nil {
		return pe
	}
	return predicateParse(s, fields)
}

// calcStack is calc_stack(): parentheses and quotes balance.
func calcStack(s string) *ParseError {
	open, quote, lastQuote, nrPreds := 1, byte(0), 0, 0
	isPred := false
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if isSpace(c) {
			continue
		}
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote, lastQuote = c, i
		case '|', '&':
			if at(s, i+1) == c {
				isPred = false
				continue
			}
		case '(':
			isPred = false
			open++
			continue
		case ')':
			isPred = false
			if open == 1 {
				return &ParseError{ErrTooManyClose, i, syscall.EPERM}
			}
			open--
			continue
		}
		if !isPred {
			nrPreds++
			isPred = true
		}
	}
	if quote != 0 {
		return &ParseError{ErrMissingQuote, lastQuote, syscall.ESRCH}
	}
	if open != 1 {
		level := open
		// Linux's loop stops before index 0: a '(' there is reported at 0 anyway.
		for i--; i > 0; i-- {
			c := s[i]
			if quote != 0 {
				if c == quote {
					quote = 0
				}
				continue
			}
			switch c {
			case '(':
				if level == open {
					return &ParseError{ErrTooManyOpen, i, syscall.ENOENT}
				}
				level--
			case ')':
				level++
			case '\'', '"':
				quote = c
			}
		}
		return &ParseError{ErrTooManyOpen, 0, syscall.ENOENT}
	}
	if nrPreds == 0 {
		return &ParseError{Errno: syscall.EINVAL}
	}
	return nil
}

// predicateParse is the first pass of predicate_parse().
func predicateParse(s string, fields map[string]Field) *ParseError {
	depth, n := 0, 0
	pendingOp := false // an && or || waits for its right operand
	ptr := 0
	for at(s, ptr) != 0 {
		next := ptr
		ptr++
		c := s[next]
		if isSpace(c) {
			continue
		}
		if c == '(' {
			depth++
			continue
		}
		if c == '!' && at(s, next+1) != '=' && at(s, next+1) != '~' {
			continue
		}
		l, pe := parsePred(s[next:], ptr, fields)
		if pe != nil {
			return pe
		}
		ptr = next + l
		n++
		pendingOp = false
		for {
			next = ptr
			ptr++
			c := at(s, next)
			if isSpace(c) {
				continue
			}
			switch c {
			case ')', 0:
			case '&', '|':
				if at(s, next+1) == c {
					ptr++
					break
				}
				return &ParseError{ErrTooManyPreds, next, syscall.EPERM}
			default:
				return &ParseError{ErrTooManyPreds, next, syscall.EPERM}
			}
			if c == '&' || c == '|' {
				pendingOp = true
				break
			}
			if c == 0 {
				ptr = next // the outer loop ends at the NUL
				break
			}
			if depth == 0 {
				return &ParseError{ErrTooManyClose, ptr, syscall.EPERM}
			}
			depth--
		}
	}
	if n == 0 {
		return &ParseError{ErrNoFilter, ptr, syscall.EINVAL}
	}
	if pendingOp {
		// Linux 6.1.192 (asked, see the closing note): "count == 1 &&"
		return &ParseError{ErrInvalidFilter, ptr, syscall.EINVAL}
	}
	return nil
}

// filterOps are parse_pred's ops[], "<=" before "<".
var filterOps = []string{"~", "!=", "==", "<=", "<", ">=", ">", "&"}

// parsePred is parse_pred(): str starts at the predicate, pos is where
// Linux says it starts (one past it). It returns the length parsed.
func parsePred(str string, pos int, fields map[string]Field) (int, *ParseError) {
	bad := func(code Err, p int) (int, *ParseError) {
		return 0, &ParseError{code, p, syscall.EINVAL}
	}
	i := 0
	for isSpace(at(str, i)) {
		i++
	}
	s := i
	for isAlnum(at(str, i)) || at(str, i) == '_' {
		i++
	}
	if i == s {
		return 0, &ParseError{Errno: syscall.EPERM} // returns -1, no parse error
	}
	field, ok := fields[str[s:i]]
	if !ok {
		return bad(ErrFieldNotFound, pos+i)
	}
	if strings.HasPrefix(str[i:], ".ustring") {
		i += len(".ustring")
	}
	for isSpace(at(str, i)) {
		i++
	}
	op := ""
	for _, o := range filterOps {
		if strings.HasPrefix(str[i:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return bad(ErrInvalidOp, pos+i)
	}
	i += len(op)
	for isSpace(at(str, i)) {
		i++
	}
	s = i
	switch c := at(str, i); {
	case c == '\'' || c == '"':
		if op != "!=" && op != "~" && op != "==" {
			return bad(ErrIllegalFieldOp, pos+i)
		}
		if !field.Str {
			return bad(ErrExpectDigit, pos+i)
		}
		for i++; at(str, i) != 0 && str[i] != c; i++ {
		}
		if at(str, i) == 0 {
			return bad(ErrMissingQuote, pos+i)
		}
		if i-(s+1) >= 256 { // MAX_FILTER_STR_VAL
			return bad(ErrOperandTooLong, pos+i)
		}
		i++
	case isDigit(c) || c == '-':
		if field.Str {
			return bad(ErrExpectString, pos+i)
		}
		if op == "~" {
			return bad(ErrIllegalFieldOp, pos+i)
		}
		if c == '-' {
			i++
		}
		for isAlnum(at(str, i)) {
			i++
		}
		if i-s >= 24 {
			return bad(ErrOperandTooLong, pos+i)
		}
		if !kstrtox(str[s:i], field.Signed) {
			return bad(ErrIllegalIntval, pos+s)
		}
	default:
		return bad(ErrInvalidValue, pos+i)
	}
	return i, nil
}

// kstrtox is whether kstrtoll (signed) or kstrtoull accepts v in base 0.
func kstrtox(v string, signed bool) bool {
	if signed {
		_, err := strconv.ParseInt(cBase(v), 0, 64)
		return err == nil
	}
	if strings.HasPrefix(v, "-") {
		return false
	}
	_, err := strconv.ParseUint(cBase(v), 0, 64)
	return err == nil
}

// cBase keeps Go from reading C-invalid forms: a leading "0" means octal in
// C (Go agrees), but Go also takes "0b", "0o" and underscores, C does not.
func cBase(v string) string {
	d := strings.TrimPrefix(v, "-")
	if strings.ContainsRune(d, '_') || len(d) > 1 && d[0] == '0' && (d[1] == 'b' || d[1] == 'B' || d[1] == 'o' || d[1] == 'O') {
		return "x" // not a number
	}
	return v
}

// Text is what append_filter_err() leaves in the filter file after the
// filter string (the caret clamped to it, off by one as Linux has it).
func (pe *ParseError) Text(filter string) string {
	if pe.Code <= ErrNone {
		return filter + "\nError: (0)\n"
	}
	w := min(pe.Pos, len(filter))
	if w > 0 {
		w++
	}
	return filter + "\n" + strings.Repeat(" ", max(w-1, 0)) + "^\nparse_error: " + pe.Code.String() + "\n"
}
