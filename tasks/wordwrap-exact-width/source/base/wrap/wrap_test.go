package wrap

import (
	"reflect"
	"testing"
)

func TestWrap(t *testing.T) {
	cases := []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"  \t\n ", 10, nil},
		{"one", 10, []string{"one"}},
		{"one two three", 20, []string{"one two three"}},
		{"one two three", 6, []string{"one", "two", "three"}},
		{"  spaced\tout\n\nwords  ", 20, []string{"spaced out words"}},
		{"a bb ccc dddd", 7, []string{"a bb", "ccc", "dddd"}},
		{"naïve café", 6, []string{"naïve", "café"}},
		{"internationalization", 7, []string{"intern-", "ationa-", "lizati-", "on"}},
		{"go extraordinarily fast", 6, []string{"go", "extra-", "ordin-", "arily", "fast"}},
		{"an extraordinarily ox is big", 7, []string{"an", "extrao-", "rdinar-", "ily ox", "is big"}},
	}
	for _, c := range cases {
		if got := Wrap(c.text, c.width); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
}

func TestWrapPanicsBelowTwo(t *testing.T) {
	for _, width := range []int{1, 0, -3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Wrap(%q, %d) did not panic", "a", width)
				}
			}()
			Wrap("a", width)
		}()
	}
}
