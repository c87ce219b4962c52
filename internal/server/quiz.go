package server

import (
	"time"

	"github.com/lectern-lms/lectern/internal/quizsvc"
)

// QuizSweepInterval is how often the expiry sweeper finishes overdue
// attempts.
const QuizSweepInterval = 2 * time.Second

// quizService makes the test engine shared by the management API, the
// learner portal and in-class quizzes (once per Main).
func (m *Main) quizService() *quizsvc.Service {
	if m.Quiz == nil {
		m.Quiz = &quizsvc.Service{Store: m.Store, Logger: m.Logger, Now: m.Now}
		if m.Learn != nil {
			m.Quiz.TestResult = m.Learn.SetTestResult
		}
	}
	if m.Hub != nil && m.Hub.Quiz == nil {
		m.Hub.Quiz = m.Quiz
	}
	return m.Quiz
}
