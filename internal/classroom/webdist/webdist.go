// Package webdist embeds the built browser client of the live classroom:
// the classroom app (assets/classroom.js, assets/classroom.css), the
// pre-class check page (assets/check.js, assets/check.css), and the chunks
// they import (assets/chunk-*.js, one assets/i18n-<tag>.js per non-English
// catalogue).
//
// The sources are in web/classroom. Rebuild with
//
//	cd web/classroom && npm ci && npm run build
//
// which type-checks and runs Vite, replacing assets/ with fixed file names
// (no content hashes). The output is committed and reproducible: building
// twice gives identical bytes, so CI can rebuild and fail on any difference.
// The server renders the HTML shells itself and serves FS under
// /classroom/assets/; nothing here depends on an index.html.
package webdist

import "embed"

// FS holds assets/ and everything under it.
//
//go:embed assets
var FS embed.FS
