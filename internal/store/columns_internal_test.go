package store

import (
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/lms"
)

// TestClassFieldsCorrupt: a class's fields column not of twenty-nine
// integers and the texts they measure is an error, never a class with
// its fields shifted.
func TestClassFieldsCorrupt(t *testing.T) {
	ints := strings.Repeat("1,", 20)
	lengths := "5,0,10,3,0,0,3,2,20,"
	texts := "Title2030-01-02UTCusdkw2030-01-01T10:00:00Z2030-01-01T11:00:00Z"
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"no texts", ints + "5,0,10,3,0,0,3,2,20", "not 29 integers"},
		{"twenty-eight", ints + "5,0,10,3,0,0,3,2," + texts, "not 29 integers"},
		{"empty", "", "not 29 integers"},
		{"a word", "x" + (ints + lengths + texts)[1:], "not 29 integers"},
		{"an empty integer", "," + (ints + lengths + texts)[2:], "not 29 integers"},
		{"a text too long", ints + "5,0,10,3,0,0,3,2,50," + texts, "text 9 is 50 bytes of 40 left"},
		{"a negative length", ints + "-5,0,10,3,0,0,3,2,20," + texts, "text 1 is -5 bytes"},
		{"not an instant", ints + "5,0,10,3,0,0,3,2,20," + texts[:len(texts)-2], "cannot parse"},
		{"a number", int64(1), "int64, not text"},
		{"NULL", nil, "not 29 integers"},
	} {
		var c lms.LiveClass
		err := classFields{&c}.Scan(tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	var c lms.LiveClass
	err := classFields{&c}.Scan([]byte(ints + lengths + texts))
	if err != nil || c.Published != 1 || !c.IsRecurring || c.Title != "Title" || c.Date != "2030-01-02" ||
		c.TimezoneName != "UTC" || c.Currency != "usd" || c.Keyword != "kw" || c.Description != "" ||
		c.CreatedAt.Hour() != 10 || c.UpdatedAt.Hour() != 11 {
		t.Errorf("bytes: %v, %+v", err, c)
	}
}

// TestListedUserCorrupt: texts of a listed user not of the form
// "N,M,texts" are an error, never a user with its texts cut elsewhere.
func TestListedUserCorrupt(t *testing.T) {
	for _, v := range []any{"", "3,", "3,4", "a,1,xyz", "1,b,xyz", "-1,1,xyz", "1,-1,xyz", "2,2,abc", int64(3), nil} {
		var u lms.User
		if err := (listedUser{&u}).Scan(v); err == nil {
			t.Errorf("%#v: read as %+v, want an error", v, u)
		}
	}
	var u lms.User
	if err := (listedUser{&u}).Scan([]byte("2,1,abcd@e")); err != nil || u.Name != "ab" || u.Username != "c" || u.Email != "d@e" {
		t.Errorf("bytes: %v, %+v", err, u)
	}
	if err := (listedUser{&u}).Scan("0,0,"); err != nil || u.Name != "" || u.Username != "" || u.Email != "" {
		t.Errorf("empty: %v, %+v", err, u)
	}
}
