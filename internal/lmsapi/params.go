package lmsapi

// structuredParams are the parameters of /api/v1 that take a JSON array,
// object or boolean in a JSON body. Every other parameter must be a string,
// a number or null (docs/api/conventions.md); add a name here when an
// endpoint starts reading one.
var structuredParams = map[string]bool{
	"tags":              true, // quiz questions: array of strings
	"data":              true, // quiz questions: the question's object
	"review":            true, // test settings: objects
	"demo":              true,
	"shuffle_questions": true, // test settings: booleans read by readBool
	"shuffle_answers":   true,
	"after_lesson_ids":  true, // lesson unlock rules: array of ids
	"items":             true, // checkout: array of line objects
	"events":            true, // webhooks: array of event type names
	"create_if_missing": true, // booleans read by boolParam
	"is_required":       true,
	"is_preview":        true,
	"all":               true,
	"remove":            true,
}
