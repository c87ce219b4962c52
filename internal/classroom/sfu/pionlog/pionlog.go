// Package pionlog adapts log/slog to the logging interface of the pion
// WebRTC libraries.
package pionlog

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pion/logging"
)

// Factory returns a pion LoggerFactory that writes to l. Every logger it
// makes carries a "pion" attribute with its scope ("ice", "dtls", ...).
//
// pion's Debug and Info messages are logged at slog's Debug level (pion is
// chatty at Info: every ICE state change), its Trace below Debug, its Warn at
// Warn and its Error at Error. A nil l discards everything.
func Factory(l *slog.Logger) logging.LoggerFactory {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return factory{l}
}

// levelTrace is below slog.LevelDebug: pion traces every packet, so its
// trace messages appear only when a handler asks for that level explicitly.
const levelTrace = slog.LevelDebug - 4

type factory struct{ l *slog.Logger }

func (f factory) NewLogger(scope string) logging.LeveledLogger {
	return logger{f.l.With("pion", scope)}
}

type logger struct{ l *slog.Logger }

func (g logger) log(level slog.Level, msg string) {
	g.l.Log(context.Background(), level, msg)
}

func (g logger) logf(level slog.Level, format string, args ...any) {
	if !g.l.Enabled(context.Background(), level) {
		return
	}
	g.l.Log(context.Background(), level, fmt.Sprintf(format, args...))
}

func (g logger) Trace(msg string)                  { g.log(levelTrace, msg) }
func (g logger) Tracef(format string, args ...any) { g.logf(levelTrace, format, args...) }
func (g logger) Debug(msg string)                  { g.log(slog.LevelDebug, msg) }
func (g logger) Debugf(format string, args ...any) { g.logf(slog.LevelDebug, format, args...) }
func (g logger) Info(msg string)                   { g.log(slog.LevelDebug, msg) }
func (g logger) Infof(format string, args ...any)  { g.logf(slog.LevelDebug, format, args...) }
func (g logger) Warn(msg string)                   { g.log(slog.LevelWarn, msg) }
func (g logger) Warnf(format string, args ...any)  { g.logf(slog.LevelWarn, format, args...) }
func (g logger) Error(msg string)                  { g.log(slog.LevelError, msg) }
func (g logger) Errorf(format string, args ...any) { g.logf(slog.LevelError, format, args...) }
