// Package i18n holds the interface strings of the live classroom: one flat
// key → string JSON catalogue per language tag (en.json, fr.json, ...), with
// {name} placeholders. The browser client bundles the same files
// (web/classroom imports them), and the server uses Tag to tell the client
// which language a class forces.
package i18n

import (
	"embed"
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
)

//go:embed *.json
var files embed.FS

// byIsLang maps the classroom API's isLang ids (seed 001's list) that have a
// complete catalogue to its tag.
var byIsLang = map[int]string{
	1:  "ar", // arabic
	5:  "zh", // chinese-simplified
	10: "nl", // dutch
	11: "en", // english
	14: "fr", // french
	15: "de", // german
	19: "hi", // hindi
	23: "it", // italian
	24: "ja", // japanese
	27: "ko", // korean
	35: "pt", // portuguese
	37: "ru", // russian
	41: "es", // spanish
	46: "tr", // turkish
}

// Tag maps the classroom API's isLang id (0-50, seed 001's list) to the
// catalogue the room forces: "" for 0 (users choose), the tag for a language
// with a complete catalogue, "en" for any other id.
func Tag(isLang int) string {
	if isLang == 0 {
		return ""
	}
	if tag, ok := byIsLang[isLang]; ok {
		return tag
	}
	return "en"
}

var load = sync.OnceValue(func() map[string]map[string]string {
	all := map[string]map[string]string{}
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := files.ReadFile(name)
		if err != nil {
			panic(err)
		}
		cat := map[string]string{}
		if err := json.Unmarshal(data, &cat); err != nil {
			panic("i18n: " + name + ": " + err.Error())
		}
		all[strings.TrimSuffix(path.Base(name), ".json")] = cat
	}
	return all
})

// Tags lists the complete catalogues, sorted.
func Tags() []string {
	return slices.Sorted(maps.Keys(load()))
}

// Catalogue returns a copy of the catalogue for tag.
func Catalogue(tag string) (map[string]string, bool) {
	cat, ok := load()[tag]
	if !ok {
		return nil, false
	}
	return maps.Clone(cat), true
}

// RTL reports whether tag's script runs right to left.
func RTL(tag string) bool {
	return tag == "ar"
}
