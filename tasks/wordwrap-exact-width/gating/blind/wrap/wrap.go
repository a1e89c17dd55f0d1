// Package wrap breaks plain text into lines of a bounded width, for the help
// output of a command-line tool.
//
// Width is counted in runes (Unicode code points), not bytes, so "naïve" is
// five wide. Words are the runs of non-space characters between whitespace, as
// strings.Fields splits them.
package wrap

import (
	"strings"
	"unicode/utf8"
)

// Wrap breaks text into lines of at most width runes.
//
// Lines are filled greedily: each line takes as many of the following words as
// fit, separated by single spaces, so a line is exactly width runes wide when
// its words fill it. A word that fits on a line of its own is never broken.
// A word wider than width starts a new line and is broken with hyphens: each
// line holds its next width-1 runes followed by "-", until the rest of the word
// fits in width; that rest starts a line that the following words may join.
//
// No line is empty, and no line begins or ends with a space. Text with no words
// gives no lines (nil). Wrap panics when width is less than 2.
func Wrap(text string, width int) []string {
	if width < 2 {
		panic("wrap: width must be at least 2")
	}
	var lines []string
	line, lineWidth := "", 0
	for _, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		if n > width {
			// Too wide for a line of its own: hyphenate it.
			if lineWidth > 0 {
				lines = append(lines, line)
			}
			pieces, rest := hyphenate(word, width)
			lines = append(lines, pieces...)
			line, lineWidth = rest, utf8.RuneCountInString(rest)
			continue
		}
		if lineWidth > 0 && lineWidth+1+n <= width {
			line += " " + word
			lineWidth += 1 + n
			continue
		}
		if lineWidth > 0 {
			lines = append(lines, line)
		}
		line, lineWidth = word, n
	}
	if lineWidth > 0 {
		lines = append(lines, line)
	}
	return lines
}

// hyphenate breaks word into hyphenated pieces of width runes (width-1 runes of
// the word and a "-") and returns them with the rest of the word.
func hyphenate(word string, width int) (pieces []string, rest string) {
	for utf8.RuneCountInString(word) >= width {
		head, tail := cut(word, width-1)
		pieces = append(pieces, head+"-")
		word = tail
	}
	return pieces, word
}

// cut splits s after its first n runes.
func cut(s string, n int) (head, tail string) {
	for i := range s {
		if n == 0 {
			return s[:i], s[i:]
		}
		n--
	}
	return s, ""
}
