package simt

import (
	"fmt"
	"strconv"
	"strings"
)

// tokKind classifies a token of preprocessed C++.
type tokKind uint8

const (
	tIdent tokKind = iota
	tNumber
	tString
	tChar
	tPunct
)

// A token is a span of the source with the place it comes from (the line
// markers of preprocessed output give the original file and line).
type token struct {
	kind       tokKind
	start, end int
	file       string
	line       int
	// system is true in code from a system header (line marker flag 3).
	system bool
}

// puncts are C++'s punctuators, longest first so the lexer takes the
// longest match. "[[" is not one: attributes are found as two "[".
var puncts = []string{
	"<<=", ">>=", "...", "->*", "<=>",
	"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##",
	"{", "}", "[", "]", "(", ")", ";", ":", ",", ".", "?", "~", "!", "+", "-",
	"*", "/", "%", "^", "&", "|", "=", "<", ">", "#",
}

// lex splits preprocessed C++ into tokens, following its line markers
// ("# 12 \"k.cu\" 1 3") for each token's file and line. Other directives
// (#pragma) are skipped.
func lex(src string) ([]token, error) {
	var toks []token
	file, line := "", 1
	system := false
	atLineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			atLineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			line++
			continue
		case c == '#' && atLineStart:
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			dir := src[i+1 : i+end]
			if f, l, sys, ok := parseLineMarker(dir); ok {
				file, line, system = f, l-1, sys
			}
			i += end
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: unterminated comment", file, line)
			}
			line += strings.Count(src[i:i+2+end+2], "\n")
			i += 2 + end + 2
			continue
		}
		atLineStart = false
		start := i
		var kind tokKind
		switch {
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			// String and character literal prefixes.
			if j < len(src) && (src[j] == '"' || src[j] == '\'') {
				switch src[i:j] {
				case "L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R":
					var err error
					kind, i, err = lexQuoted(src, j, strings.HasSuffix(src[i:j], "R"))
					if err != nil {
						return nil, fmt.Errorf("%s:%d: %v", file, line, err)
					}
					toks = append(toks, token{kind: kind, start: start, end: i, file: file, line: line, system: system})
					line += strings.Count(src[start:i], "\n")
					continue
				}
			}
			kind, i = tIdent, j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) {
				d := src[j]
				if (d == '+' || d == '-') && strings.ContainsRune("eEpP", rune(src[j-1])) {
					j++
					continue
				}
				if isIdentChar(d) || d == '.' || d == '\'' {
					j++
					continue
				}
				break
			}
			kind, i = tNumber, j
		case c == '"' || c == '\'':
			var err error
			kind, i, err = lexQuoted(src, i, false)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, line, err)
			}
		default:
			kind = tPunct
			matched := false
			for _, p := range puncts {
				if strings.HasPrefix(src[i:], p) {
					i += len(p)
					matched = true
					break
				}
			}
			if !matched {
				return nil, fmt.Errorf("%s:%d: unexpected character %q", file, line, c)
			}
		}
		toks = append(toks, token{kind: kind, start: start, end: i, file: file, line: line, system: system})
	}
	return toks, nil
}

// lexQuoted reads the string or character literal whose quote is at
// src[i] (raw when raw is set) and returns its kind and end.
func lexQuoted(src string, i int, raw bool) (tokKind, int, error) {
	q := src[i]
	kind := tString
	if q == '\'' {
		kind = tChar
	}
	if raw && q == '"' {
		open := strings.IndexByte(src[i:], '(')
		if open < 0 {
			return 0, 0, fmt.Errorf("bad raw string literal")
		}
		delim := ")" + src[i+1:i+open] + `"`
		end := strings.Index(src[i+open:], delim)
		if end < 0 {
			return 0, 0, fmt.Errorf("unterminated raw string literal")
		}
		return kind, i + open + end + len(delim), nil
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case q:
			return kind, j + 1, nil
		case '\n':
			return 0, 0, fmt.Errorf("unterminated literal")
		}
	}
	return 0, 0, fmt.Errorf("unterminated literal")
}

// parseLineMarker reads a preprocessor line marker's body
// (` 12 "file" 1 3`), or `line 12 "file"`.
func parseLineMarker(dir string) (file string, line int, system bool, ok bool) {
	f := strings.Fields(dir)
	if len(f) > 0 && f[0] == "line" {
		f = f[1:]
	}
	if len(f) < 2 {
		return "", 0, false, false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return "", 0, false, false
	}
	name, err := strconv.Unquote(f[1])
	if err != nil {
		return "", 0, false, false
	}
	for _, flag := range f[2:] {
		if flag == "3" {
			system = true
		}
	}
	return name, n, system, true
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '$'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
