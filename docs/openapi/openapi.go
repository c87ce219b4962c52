// Package openapi holds the OpenAPI 3.1 documents of Lectern's two APIs,
// embedded so that the server serves the one copy kept in the repository:
// lms.yaml (the LMS management API, /api/v1) and classroom.yaml (the
// virtual classroom API, /v2).
package openapi

import "embed"

// Files holds lms.yaml and classroom.yaml.
//
//go:embed lms.yaml classroom.yaml
var Files embed.FS

// Names are the documents in Files, in the order they are listed.
var Names = []string{"lms.yaml", "classroom.yaml"}
