package apidocs

import (
	"html/template"
	"strings"
)

var funcs = template.FuncMap{
	"lower": strings.ToLower,
	// anchor makes a tag name an id.
	"anchor": func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, s)
	},
	// prose is a description as text; the page keeps its line breaks.
	"prose": func(s string) string { return strings.TrimSpace(s) },
	"join":  func(s []string) string { return strings.Join(s, ", ") },
}
