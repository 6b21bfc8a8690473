package locals

import (
	"fmt"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"
)

// C syntax a debugger user types that Go's does not parse is rewritten
// into Go's before parsing (C11 section 6.5):
//   - p->f becomes p.f: Delve's dialect, and this package's, dereference
//     a pointer to select a field;
//   - a cast (T)x, T a C type name (struct/union/enum TAG, the arithmetic
//     type keywords, a typedef) with any number of '*', becomes a call of
//     a placeholder function naming the cast, applied to x, the unary
//     expression the cast binds to (C11 section 6.5.4);
//   - sizeof(T) and sizeof x become calls of a placeholder function;
//   - ~x becomes Go's ^x;
//   - an identifier that is a Go keyword (type, map, range) is prefixed
//     with keywordPrefix.
//
// Tokens come from go/scanner, so string and character literals pass
// through untouched.

// castPrefix begins the placeholder functions casts become; the rest is
// the cast's index.
const castPrefix = "__splitdbg_cast_"

// sizeofPrefix names the placeholder function sizeof becomes: with the
// index of the type among the casts for sizeof(type), with the operand
// for sizeof expression.
const sizeofPrefix = "__splitdbg_sizeof_"

// keywordPrefix begins the identifiers C names that are Go keywords
// become; Go's parser would refuse them.
const keywordPrefix = "__splitdbg_kw_"

// A cast is the type named by a C cast.
type cast struct {
	name string // the type without pointers: "struct item", "long unsigned" (baseTypeKey), a typedef
	ptrs int    // the '*'s after it
}

type ctoken struct {
	pos int
	tok token.Token
	lit string
}

// cSyntax returns expr in Go's syntax and the casts it named; isTypedef
// says which identifiers name types.
func cSyntax(expr string, isTypedef func(string) bool) (string, []cast, error) {
	var s scanner.Scanner
	fset := token.NewFileSet()
	var scanErr error
	s.Init(fset.AddFile("", -1, len(expr)), []byte(expr), func(pos token.Position, msg string) {
		if scanErr == nil {
			scanErr = fmt.Errorf("%d: %s", pos.Offset, msg)
		}
	}, 0)
	var toks []ctoken
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // inserted by the scanner
		}
		if tok.IsKeyword() { // a C identifier, or C's struct
			tok, lit = token.IDENT, tok.String()
		}
		toks = append(toks, ctoken{int(pos) - 1, tok, lit})
	}
	if scanErr != nil {
		return "", nil, scanErr
	}
	w := &cWriter{toks: toks, isTypedef: isTypedef}
	out, err := w.emit(0, len(toks))
	return out, w.casts, err
}

type cWriter struct {
	toks      []ctoken
	isTypedef func(string) bool
	casts     []cast
}

// emit writes toks[i:end] in Go's syntax.
func (w *cWriter) emit(i, end int) (string, error) {
	var b strings.Builder
	for i < end {
		if c, after, ok := w.castAt(i); ok && after < end {
			opEnd, err := w.unaryEnd(after, end, 0)
			if err != nil {
				return "", err
			}
			operand, err := w.emit(after, opEnd)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%s%d(%s) ", castPrefix, len(w.casts), operand)
			w.casts = append(w.casts, c)
			i = opEnd
			continue
		}
		if t := w.toks[i]; t.tok == token.IDENT && t.lit == "sizeof" {
			if c, after, ok := w.typeName(i + 1); ok {
				fmt.Fprintf(&b, "%s%d() ", sizeofPrefix, len(w.casts)) // sizeof(type)
				w.casts = append(w.casts, c)
				i = after
				continue
			}
			opEnd, err := w.unaryEnd(i+1, end, 0)
			if err != nil {
				return "", err
			}
			operand, err := w.emit(i+1, opEnd)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%s(%s) ", sizeofPrefix, operand) // sizeof expression
			i = opEnd
			continue
		}
		if w.arrow(i) {
			b.WriteString(". ")
			i += 2
			continue
		}
		t := w.toks[i]
		switch {
		case t.tok == token.TILDE:
			b.WriteString("^")
		case t.tok == token.IDENT && token.IsKeyword(t.lit):
			b.WriteString(keywordPrefix + t.lit) // a variable or field named as a Go keyword
		case t.lit != "":
			b.WriteString(t.lit)
		default:
			b.WriteString(t.tok.String())
		}
		b.WriteByte(' ')
		i++
	}
	return b.String(), nil
}

// arrow reports whether toks[i:] starts with "->".
func (w *cWriter) arrow(i int) bool {
	return i+1 < len(w.toks) && w.toks[i].tok == token.SUB && w.toks[i+1].tok == token.GTR && w.toks[i+1].pos == w.toks[i].pos+1
}

// cTypeWords are the keywords of C's arithmetic types and qualifiers.
var cTypeWords = map[string]bool{"void": true, "char": true, "short": true, "int": true, "long": true, "float": true, "double": true,
	"signed": true, "unsigned": true, "_Bool": true, "const": true, "volatile": true}

// castAt reports whether toks[i:] starts with a cast, "(" type-name ")"
// followed by the start of an operand, and returns its type and the
// index after ")".
func (w *cWriter) castAt(i int) (cast, int, bool) {
	c, after, ok := w.typeName(i)
	if !ok || after >= len(w.toks) || !operandStart[w.toks[after].tok] {
		return cast{}, 0, false
	}
	return c, after, true
}

// typeName reports whether toks[i:] starts with "(" type-name ")", and
// returns the type and the index after ")".
func (w *cWriter) typeName(i int) (cast, int, bool) {
	t := w.toks
	if i >= len(t) || t[i].tok != token.LPAREN {
		return cast{}, 0, false
	}
	j := i + 1
	var words []string
	tagged := false
	for ; j < len(t) && t[j].tok == token.IDENT; j++ {
		id := t[j].lit
		switch {
		case id == "const" || id == "volatile":
		case id == "struct" || id == "union" || id == "enum":
			if len(words) > 0 || j+1 >= len(t) || t[j+1].tok != token.IDENT {
				return cast{}, 0, false
			}
			words = append(words, id, t[j+1].lit)
			tagged = true
			j++
		case tagged:
			return cast{}, 0, false
		case cTypeWords[id]:
			words = append(words, id)
		case len(words) == 0 && w.isTypedef(id):
			words = append(words, id)
			tagged = true // nothing may follow a typedef name
		default:
			return cast{}, 0, false
		}
	}
	if len(words) == 0 {
		return cast{}, 0, false
	}
	c := cast{name: strings.Join(words, " ")}
	if !tagged {
		c.name = baseTypeKey(words)
		if len(words) == 1 && words[0] == "void" {
			c.name = "void"
		}
	}
	for ; j < len(t) && t[j].tok == token.MUL; j++ {
		c.ptrs++
	}
	if j >= len(t) || t[j].tok != token.RPAREN {
		return cast{}, 0, false
	}
	return c, j + 1, true
}

// operandStart are the tokens that may begin a cast's operand.
var operandStart = map[token.Token]bool{token.IDENT: true, token.INT: true, token.FLOAT: true, token.CHAR: true, token.STRING: true,
	token.LPAREN: true, token.MUL: true, token.AND: true, token.SUB: true, token.ADD: true, token.NOT: true, token.TILDE: true}

// maxCastDepth bounds nested casts and parentheses the operand scan
// recurses through.
const maxCastDepth = 64

// unaryEnd returns the end of the unary expression at toks[i:end]
// (C11 section 6.5.3): prefix operators, casts, a primary expression and
// its postfix operators.
func (w *cWriter) unaryEnd(i, end, depth int) (int, error) {
	if depth > maxCastDepth {
		return 0, fmt.Errorf("casts nested more than %d deep", maxCastDepth)
	}
	t := w.toks
	for i < end && (t[i].tok == token.MUL || t[i].tok == token.AND || t[i].tok == token.SUB || t[i].tok == token.ADD ||
		t[i].tok == token.NOT || t[i].tok == token.TILDE) {
		i++
	}
	if _, after, ok := w.castAt(i); ok {
		return w.unaryEnd(after, end, depth+1)
	}
	if i >= end {
		return 0, fmt.Errorf("a cast with no operand")
	}
	switch t[i].tok {
	case token.IDENT, token.INT, token.FLOAT, token.CHAR, token.STRING:
		i++
	case token.LPAREN:
		i = w.closing(i, end)
	default:
		return 0, fmt.Errorf("cast of %s", strconv.Quote(t[i].tok.String()))
	}
	for i > 0 && i < end {
		switch {
		case t[i].tok == token.PERIOD && i+1 < end && t[i+1].tok == token.IDENT:
			i += 2
		case w.arrow(i) && i+2 < end && t[i+2].tok == token.IDENT:
			i += 3
		case t[i].tok == token.LBRACK || t[i].tok == token.LPAREN:
			i = w.closing(i, end)
		case t[i].tok == token.INC || t[i].tok == token.DEC:
			i++
		default:
			return i, nil
		}
	}
	if i < 0 {
		return 0, fmt.Errorf("unbalanced brackets")
	}
	return i, nil
}

// closing returns the index after the bracket that closes toks[i], -1 if
// none before end.
func (w *cWriter) closing(i, end int) int {
	var stack []token.Token
	for ; i < end; i++ {
		switch w.toks[i].tok {
		case token.LPAREN:
			stack = append(stack, token.RPAREN)
		case token.LBRACK:
			stack = append(stack, token.RBRACK)
		case token.RPAREN, token.RBRACK:
			if len(stack) == 0 || stack[len(stack)-1] != w.toks[i].tok {
				return -1
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1
			}
		}
	}
	return -1
}
