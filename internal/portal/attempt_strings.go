package portal

// The attempt pages' strings. English is the catalogue every other
// language falls back to; a language is added by adding its map.
var attemptStrings = map[string]map[string]string{
	"en": {
		"cannot_start":    "This test cannot be started",
		"start_title":     "Before you start",
		"mode":            "Mode",
		"mode_test":       "Test",
		"mode_test_help":  "Counts towards your grade and your attempts.",
		"mode_demo":       "Demo (practice)",
		"mode_demo_help":  "Practice with its own time limit. It never counts: not towards attempts, grade, points or completion.",
		"time_limit":      "Time limit",
		"untimed":         "No time limit",
		"attempts_left":   "Attempts left",
		"unlimited":       "Unlimited",
		"ends_at_close":   "If you start now, the attempt ends at %s because the test closes.",
		"start":           "Start",
		"resume":          "Resume the attempt in progress",
		"question":        "Question",
		"points":          "points",
		"point":           "point",
		"pending_one":     "Waiting for a teacher's marking.",
		"time_left":       "Time left",
		"saved":           "All answers saved",
		"saving":          "Saving…",
		"not_saved":       "Offline — your latest answers are not saved yet. They are kept in this tab and will be sent when you are back online.",
		"time_up":         "Time is up. Answers saved before the deadline were kept.",
		"submit":          "Submit answers",
		"submit_confirm":  "Submit your answers? You cannot change them afterwards.",
		"move_up":         "Move up",
		"move_down":       "Move down",
		"choose":          "Choose…",
		"result":          "Result",
		"score":           "Score",
		"passed":          "Passed",
		"failed":          "Not passed",
		"pending":         "Some answers wait for a teacher's marking.",
		"right":           "Right",
		"partial":         "Partly right",
		"wrong":           "Wrong",
		"right_answer":    "Right answer",
		"feedback":        "Feedback",
		"comment":         "Teacher's comment",
		"back_to_test":    "Back to the test",
		"no_review":       "Your answers were submitted. The review is not available yet.",
		"true":            "True",
		"false":           "False",
		"answer":          "Answer",
		"minutes_left":    "%d minutes left",
		"one_minute_left": "1 minute left",
		"seconds_left":    "%d seconds left",
		"submitted":       "Submitted",
		"attempt":         "Attempt",
		"previous":        "Previous",
		"next":            "Next",
		"page_of":         "Page %d of %d",
		"pages":           "Pages",
		"demo_badge":      "Demo — does not count",
	},
}

// attemptText returns the string for key in lang, else in English.
func attemptText(lang, key string) string {
	if m, ok := attemptStrings[lang]; ok {
		if s, ok := m[key]; ok {
			return s
		}
	}
	return attemptStrings["en"][key]
}
