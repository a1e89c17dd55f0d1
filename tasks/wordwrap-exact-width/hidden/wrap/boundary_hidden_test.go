package wrap_test

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"wordwrap.example/text/wrap"
)

type wrapCase struct {
	text  string
	width int
	want  []string
}

func check(t *testing.T, why string, cases []wrapCase) {
	t.Helper()
	for _, c := range cases {
		got := wrap.Wrap(c.text, c.width)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q: %s", c.text, c.width, got, c.want, why)
		}
	}
}

func TestLineFilledExactlyKeepsItsLastWord(t *testing.T) {
	check(t, "a line whose words fill the width exactly was broken before it was full", []wrapCase{
		{"the quick brown fox", 9, []string{"the quick", "brown fox"}},
		{"ab cd ef gh", 5, []string{"ab cd", "ef gh"}},
		{"a b c d e f", 3, []string{"a b", "c d", "e f"}},
		{"one two three four", 13, []string{"one two three", "four"}},
		{"naïve café crème brûlée", 10, []string{"naïve café", "crème", "brûlée"}},
		{"日本 語の 文章", 5, []string{"日本 語の", "文章"}},
		{"xx yy", 5, []string{"xx yy"}},
	})
}

func TestWordAsWideAsTheLineIsNotHyphenated(t *testing.T) {
	check(t, "a word exactly as wide as a line fits on a line of its own", []wrapCase{
		{"deadline", 8, []string{"deadline"}},
		{"go deadline now", 8, []string{"go", "deadline", "now"}},
		{"ab", 2, []string{"ab"}},
		{"ab cd ef", 2, []string{"ab", "cd", "ef"}},
		{"brûlée crème", 6, []string{"brûlée", "crème"}},
		{"x 日本語の文 y", 5, []string{"x", "日本語の文", "y"}},
	})
}

func TestRestOfLongWordAsWideAsTheLineStaysWhole(t *testing.T) {
	check(t, "the rest of a hyphenated word fits in width, so it is not broken again", []wrapCase{
		{"extraordinarily", 8, []string{"extraor-", "dinarily"}},
		{"go extraordinarily fast", 8, []string{"go", "extraor-", "dinarily", "fast"}},
		{"abcdefghij", 4, []string{"abc-", "def-", "ghij"}},
		{"abc", 2, []string{"a-", "bc"}},
		{"crèmebrûlée", 6, []string{"crème-", "brûlée"}},
	})
}

func TestHyphenationAndFillFollowTheDocumentedRules(t *testing.T) {
	check(t, "long words start a new line and are broken into width-1 runes and a hyphen", []wrapCase{
		{"internationalization", 7, []string{"intern-", "ationa-", "lizati-", "on"}},
		{"an extraordinarily ox is big", 7, []string{"an", "extrao-", "rdinar-", "ily ox", "is big"}},
		{"abcdefgh hi", 4, []string{"abc-", "def-", "gh", "hi"}},
		{"abcdefg hi", 5, []string{"abcd-", "efg", "hi"}},
		{"abcdefg h", 5, []string{"abcd-", "efg h"}},
		{"  lots\t of\n\n  space  ", 20, []string{"lots of space"}},
		{"", 5, nil},
		{" \t\n", 5, nil},
	})
}

// model wraps text the way the package documents it, by a different route:
// words are first turned into tokens (hyphenated pieces are whole lines), then
// the tokens are laid out greedily.
func model(text string, width int) []string {
	type token struct {
		s        string
		n        int
		fullLine bool // a hyphenated piece: a line of its own
		newLine  bool // the start of a hyphenated word: begins a new line
	}
	var tokens []token
	for _, word := range strings.Fields(text) {
		runes := []rune(word)
		if len(runes) <= width {
			tokens = append(tokens, token{s: word, n: len(runes)})
			continue
		}
		first := true
		for len(runes) > width {
			tokens = append(tokens, token{s: string(runes[:width-1]) + "-", n: width, fullLine: true, newLine: first})
			runes = runes[width-1:]
			first = false
		}
		tokens = append(tokens, token{s: string(runes), n: len(runes)})
	}
	var lines []string
	var cur []string
	curWidth := 0
	for _, tok := range tokens {
		if len(cur) > 0 && (tok.newLine || tok.fullLine || curWidth+1+tok.n > width) {
			lines = append(lines, strings.Join(cur, " "))
			cur, curWidth = nil, 0
		}
		if tok.fullLine {
			lines = append(lines, tok.s)
			continue
		}
		if len(cur) > 0 {
			curWidth++
		}
		cur = append(cur, tok.s)
		curWidth += tok.n
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}

func TestRandomTextsMatchModel(t *testing.T) {
	rng := rand.New(rand.NewSource(20261203))
	alphabet := []rune("abcdefghijklmnoé日")
	spaces := []string{" ", "  ", "\t", "\n", " \n "}
	for round := 0; round < 3000; round++ {
		width := 2 + rng.Intn(11)
		var b strings.Builder
		words := rng.Intn(12)
		for i := 0; i < words; i++ {
			if i > 0 || rng.Intn(4) == 0 {
				b.WriteString(spaces[rng.Intn(len(spaces))])
			}
			n := 1 + rng.Intn(2*width+2)
			for j := 0; j < n; j++ {
				b.WriteRune(alphabet[rng.Intn(len(alphabet))])
			}
		}
		text := b.String()
		want := model(text, width)
		got := func() (lines []string) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Wrap(%q, %d) panicked: %v", text, width, r)
				}
			}()
			return wrap.Wrap(text, width)
		}()
		for _, line := range got {
			if n := utf8.RuneCountInString(line); n == 0 || n > width || strings.TrimSpace(line) != line {
				t.Fatalf("Wrap(%q, %d) = %q: line %q breaks the documented line rules", text, width, got, line)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: Wrap(%q, %d) = %q, want %q", round, text, width, got, want)
		}
	}
}
