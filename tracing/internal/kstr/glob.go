package kstr

// GlobMatch is lib/glob.c's glob_match: '?', '*', '[...]' classes with
// ranges and '!' inversion, and '\' escapes; '*' matches '/' too.
func GlobMatch(pat, str string) bool {
	p, s := 0, 0
	backPat, backStr := -1, 0
	for {
		c := at(str, s)
		s++
		d := at(pat, p)
		p++
		matched := false
		switch d {
		case '?':
			if c == 0 {
				return false
			}
			continue
		case '*':
			if at(pat, p) == 0 {
				return true
			}
			backPat = p
			s--
			backStr = s
			continue
		case '[':
			inverted := at(pat, p) == '!'
			class := p
			if inverted {
				class++
			}
			a := at(pat, class)
			class++
			malformed := false
			match := false
			for {
				b := a
				if a == 0 {
					malformed = true
					break
				}
				if at(pat, class) == '-' && at(pat, class+1) != ']' {
					b = at(pat, class+1)
					if b == 0 {
						malformed = true
						break
					}
					class += 2
				}
				if a <= c && c <= b {
					match = true
				}
				a = at(pat, class)
				class++
				if a == ']' {
					break
				}
			}
			if !malformed {
				if match == inverted {
					break // backtrack
				}
				p = class
				continue
			}
			// A malformed class is a literal '['.
			if c == d {
				continue
			}
		case '\\':
			d = at(pat, p)
			p++
			matched = c == d
		default:
			matched = c == d
		}
		if matched {
			if d == 0 {
				return true
			}
			continue
		}
		// backtrack
		if c == 0 || backPat < 0 {
			return false
		}
		p = backPat
		backStr++
		s = backStr
	}
}

// at is str[i] with C's terminating NUL.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}
