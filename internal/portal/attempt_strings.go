package portal

// attemptText is the attempt pages' string for key (a learn.quiz key of
// the catalogues) in lang, else in English, its {name} placeholders filled
// from args (name, value pairs). It is plain text: the templates escape it.
func attemptText(lang, key string, args ...any) string {
	d := pageData{cat: pageCatalogues()[lang]}
	return d.S(key, args...)
}
