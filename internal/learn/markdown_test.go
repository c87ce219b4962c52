package learn

import (
	"strings"
	"testing"
)

func TestRenderMarkdownSanitises(t *testing.T) {
	tests := []struct {
		name    string
		md      string
		want    []string // substrings that must be present
		notWant []string // substrings that must be absent (lower-cased HTML)
	}{
		{"plain markdown", "# Title\n\nSome *emphasis* and a [link](https://example.com).",
			[]string{"<h1", "Title</h1>", "<em>emphasis</em>", `href="https://example.com"`, `rel="nofollow noreferrer noopener"`}, nil},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"<table>", "<td>1</td>"}, nil},
		{"script tag", "Hello <script>alert(1)</script>", []string{"Hello"}, []string{"<script", "alert(1)</script"}},
		{"onerror attribute", `<img src="x" onerror="alert(1)">`, nil, []string{"onerror", "<img"}},
		{"javascript link", "[click](javascript:alert(1))", []string{"click"}, []string{"javascript:"}},
		{"javascript link with entities", "[click](jav&#x09;ascript:alert(1))", []string{"click"}, []string{"javascript:", "jav\tascript"}},
		{"raw html block", "<div style=\"position:fixed\"><iframe src=\"https://evil.example\"></iframe></div>", nil,
			[]string{"<iframe", "<div", "style="}},
		{"inline html event", `text <a href="#" onclick="steal()">x</a>`, []string{"text"}, []string{"onclick", "steal()"}},
		{"data uri image", "![x](data:text/html;base64,PHNjcmlwdD4=)", nil, []string{"data:text/html"}},
		{"svg with script", "<svg><script>alert(1)</script></svg>", nil, []string{"<svg", "<script"}},
		{"markdown image stays", "![diagram](https://example.com/d.png)", []string{`<img src="https://example.com/d.png"`, `alt="diagram"`}, nil},
		{"code is escaped", "`<b>bold</b>`", []string{"<code>&lt;b&gt;bold&lt;/b&gt;</code>"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(RenderMarkdown(tt.md))
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			low := strings.ToLower(got)
			for _, w := range tt.notWant {
				if strings.Contains(low, strings.ToLower(w)) {
					t.Errorf("output contains %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestEmbedURL(t *testing.T) {
	tests := []struct{ provider, id, want string }{
		{"youtube", "dQw4w9WgXcQ", "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"},
		{"vimeo", "76979871", "https://player.vimeo.com/video/76979871?dnt=1"},
		{"youtube", "dQw4w9WgXc", ""},               // 10 characters
		{"youtube", `dQw4w9WgX"Q`, ""},              // a quote
		{"youtube", "../../evil1", ""},              // a path
		{"vimeo", "7697987a", ""},                   // not digits
		{"vimeo", "https://vimeo.com/76979871", ""}, // a URL, not an id
		{"dailymotion", "x7tgad0", ""},              // unknown provider
		{"youtube", "<script>x</script>", ""},       // markup
		{"vimeo", "1234567890123", ""},              // too long
		{"youtube", "dQw4w9WgXcQ\n", ""},            // trailing newline
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := EmbedURL(tt.provider, tt.id); got != tt.want {
			t.Errorf("EmbedURL(%q, %q) = %q, want %q", tt.provider, tt.id, got, tt.want)
		}
	}
}

func TestParseEmbedURL(t *testing.T) {
	tests := []struct{ in, provider, id string }{
		{"https://www.youtube.com/watch?v=dQw4w9WgXcQ", "youtube", "dQw4w9WgXcQ"},
		{"https://youtube.com/watch?v=dQw4w9WgXcQ&t=42s", "youtube", "dQw4w9WgXcQ"},
		{"https://m.youtube.com/watch?v=dQw4w9WgXcQ", "youtube", "dQw4w9WgXcQ"},
		{"https://youtu.be/dQw4w9WgXcQ?si=abc", "youtube", "dQw4w9WgXcQ"},
		{"https://www.youtube.com/embed/dQw4w9WgXcQ", "youtube", "dQw4w9WgXcQ"},
		{"https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ", "youtube", "dQw4w9WgXcQ"},
		{"https://www.youtube.com/shorts/dQw4w9WgXcQ", "youtube", "dQw4w9WgXcQ"},
		{"https://vimeo.com/76979871", "vimeo", "76979871"},
		{"https://player.vimeo.com/video/76979871?h=abc", "vimeo", "76979871"},
		{"https://www.youtube.com/watch?v=short", "", ""},
		{"https://evil.example/watch?v=dQw4w9WgXcQ", "", ""},
		{"https://youtube.com.evil.example/watch?v=dQw4w9WgXcQ", "", ""},
		{"javascript:alert(1)//youtu.be/dQw4w9WgXcQ", "", ""},
		{"https://vimeo.com/channels/staffpicks", "", ""},
		{"dQw4w9WgXcQ", "", ""},
		{`<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe>`, "", ""},
	}
	for _, tt := range tests {
		p, id, ok := ParseEmbedURL(tt.in)
		if p != tt.provider || id != tt.id || ok != (tt.provider != "") {
			t.Errorf("ParseEmbedURL(%q) = %q, %q, %v; want %q, %q", tt.in, p, id, ok, tt.provider, tt.id)
		}
	}
}
