package learn

import (
	"bytes"
	"html/template"

	"github.com/lectern-lms/lectern/internal/lms"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

var (
	// Raw HTML in a lesson is dropped by goldmark (it is not rendered
	// unsafe); bluemonday's UGC policy then removes anything that is not
	// plain content (scripts, event handlers, javascript: links, styles)
	// as a second, independent line.
	markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))
	sanitise = func() *bluemonday.Policy {
		p := bluemonday.UGCPolicy()
		p.RequireNoReferrerOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		return p
	}()
)

// RenderMarkdown turns a text lesson's Markdown (CommonMark with GitHub
// tables, strikethrough, task lists and autolinks) into HTML that is safe
// to put in a page.
func RenderMarkdown(md string) template.HTML {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(md), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(md))
	}
	return template.HTML(sanitise.SanitizeBytes(buf.Bytes()))
}

// EmbedURL is the player address of an embedded video: YouTube's
// privacy-enhanced (no-cookie) host, or Vimeo with do-not-track. It is
// "" for an unknown provider or a malformed id.
func EmbedURL(provider, id string) string {
	switch {
	case !lms.ValidEmbed(provider, id):
		return ""
	case provider == lms.EmbedYouTube:
		return "https://www.youtube-nocookie.com/embed/" + id
	case provider == lms.EmbedVimeo:
		return "https://player.vimeo.com/video/" + id + "?dnt=1"
	}
	return ""
}
