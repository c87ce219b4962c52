// Package lms holds the types and error values shared by Lectern's store and
// its two HTTP APIs. It knows nothing of HTTP or SQL.
package lms

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Code classifies an Error. Each API maps codes to its own status and body.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid_input"
	CodeUnauthorized Code = "unauthorized"
	CodeForbidden    Code = "forbidden"
	CodeNotFound     Code = "not_found"
	CodeConflict     Code = "conflict"
	CodeInternal     Code = "internal"
)

// FieldError names one bad input field and what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error a client may see. Message is safe to show; anything
// internal stays in the wrapped error and is only logged.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
}

func (e *Error) Error() string { return e.Message }

// NotFoundf returns a not-found error with a formatted message.
func NotFoundf(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// Conflictf returns a conflict error with a formatted message.
func Conflictf(format string, args ...any) *Error {
	return &Error{Code: CodeConflict, Message: fmt.Sprintf(format, args...)}
}

// Invalidf returns an invalid-input error about one field.
func Invalidf(field, format string, args ...any) *Error {
	var v Validator
	v.Add(field, fmt.Sprintf(format, args...))
	return v.Err().(*Error)
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, else
// CodeInternal.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsNotFound reports whether err is a not-found error.
func IsNotFound(err error) bool { return ErrorCode(err) == CodeNotFound }

// Validator collects field errors so that one response can name every bad
// field at once.
type Validator struct {
	fields []FieldError
}

// Add records a problem with field. Only the first problem per field is kept.
func (v *Validator) Add(field, message string) {
	for _, f := range v.fields {
		if f.Field == field {
			return
		}
	}
	v.fields = append(v.fields, FieldError{Field: field, Message: message})
}

// Check records message for field when ok is false.
func (v *Validator) Check(ok bool, field, message string) {
	if !ok {
		v.Add(field, message)
	}
}

// Has reports whether field already has a problem.
func (v *Validator) Has(field string) bool {
	for _, f := range v.fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// Valid reports whether no problem was recorded.
func (v *Validator) Valid() bool { return len(v.fields) == 0 }

// Err returns nil or an *Error with code CodeInvalid naming every field, in
// field-name order.
func (v *Validator) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	fields := append([]FieldError(nil), v.fields...)
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].Field < fields[j].Field })
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + " " + f.Message
	}
	return &Error{Code: CodeInvalid, Message: "invalid input: " + strings.Join(parts, "; "), Fields: fields}
}
