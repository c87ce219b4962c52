package portal

import "github.com/lectern-lms/lectern/internal/quizsvc"

// attemptText is the attempt pages' string for key (a learn.quiz key of
// the catalogues) in lang, else in English, its {name} placeholders filled
// from args (name, value pairs). It is plain text: the templates escape it.
func attemptText(lang, key string, args ...any) string {
	d := pageData{cat: pageCatalogues()[lang]}
	return d.S(key, args...)
}

// refusalKeys are the catalogue keys of quizsvc's start refusals.
var refusalKeys = map[string]string{
	quizsvc.RefuseBadMode:     "learn.quiz.why.badMode",
	quizsvc.RefuseNoDemo:      "learn.quiz.why.noDemo",
	quizsvc.RefuseNotEnrolled: "learn.quiz.why.notEnrolled",
	quizsvc.RefuseNotOpen:     "learn.quiz.why.notOpen",
	quizsvc.RefuseClosed:      "learn.quiz.why.closed",
	quizsvc.RefuseNoAttempts:  "learn.quiz.why.noAttempts",
	quizsvc.RefuseWait:        "learn.quiz.why.wait",
}

// refusalText words why an attempt cannot start in lang ("" when it can).
// Times are UTC, as on the rest of the start page.
func refusalText(lang string, r quizsvc.Refusal) string {
	key, ok := refusalKeys[r.Reason]
	if !ok {
		return r.String()
	}
	return attemptText(lang, key, "at", r.At.UTC().Format("2006-01-02 15:04")+" UTC", "used", r.Used, "limit", r.Limit)
}
