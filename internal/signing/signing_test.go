package signing

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	secret = []byte("0123456789abcdef0123456789abcdef")
	now    = time.Unix(2_000_000_000, 0)
	claims = Launch{Domain: 3, Class: 42, Occurrence: 2, UserID: "u-7", UserName: "Ann & Bo", Teacher: true,
		Lesson: "Lesson 1", Course: "Maths", Extend: 1, Expires: now.Add(time.Hour)}
)

func parse(t *testing.T, raw string) (string, url.Values) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/classroom/"), u.Query()
}

func TestSignedLaunch(t *testing.T) {
	raw := SignedLaunchURL("https://lms.example.com/", secret, claims)
	if !strings.HasPrefix(raw, "https://lms.example.com/classroom/42?") {
		t.Fatalf("url %s", raw)
	}
	class, q := parse(t, raw)
	l, sig, err := ParseSignedLaunch(class, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySignedLaunch(secret, l, sig, now); err != nil {
		t.Fatalf("valid link refused: %v", err)
	}
	if l.UserName != "Ann & Bo" || !l.Teacher || l.Class != 42 || l.Occurrence != 2 {
		t.Fatalf("claims %+v", l)
	}
	tamper := map[string]func(url.Values){
		"role":     func(q url.Values) { q.Set("role", "student") },
		"user":     func(q url.Values) { q.Set("userId", "u-8") },
		"expiry":   func(q url.Values) { q.Set("expires", "9999999999") },
		"domain":   func(q url.Values) { q.Set("d", "4") },
		"lesson":   func(q url.Values) { q.Set("lessonName", "Other") },
		"isExtend": func(q url.Values) { q.Set("isExtend", "0") },
	}
	for name, f := range tamper {
		_, q := parse(t, raw)
		f(q)
		l, sig, err := ParseSignedLaunch(class, q)
		if err == nil {
			err = VerifySignedLaunch(secret, l, sig, now)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("tampered %s: %v", name, err)
		}
	}
	l2, sig2, _ := ParseSignedLaunch("43", q)
	if err := VerifySignedLaunch(secret, l2, sig2, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("other class accepted: %v", err)
	}
	if err := VerifySignedLaunch(secret, l, sig, now.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired link: %v", err)
	}
	if err := VerifySignedLaunch([]byte("another domain's secret.........."), l, sig, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("other secret accepted: %v", err)
	}
}

func TestEncryptedLaunch(t *testing.T) {
	raw := EncryptedLaunchURL("http://h", secret, claims)
	token := strings.TrimPrefix(raw, "http://h/classroom/e/")
	if strings.Contains(raw, "Ann") || strings.Contains(raw, "u-7") || strings.Contains(raw, "Maths") {
		t.Fatalf("encrypted url shows its claims: %s", raw)
	}
	if d, err := EncryptedDomain(token); err != nil || d != 3 {
		t.Fatalf("domain %d %v", d, err)
	}
	l, err := DecryptLaunch(secret, token, now)
	if err != nil || l.UserName != "Ann & Bo" || l.Class != 42 || !l.Expires.Equal(claims.Expires) {
		t.Fatalf("decrypt: %+v %v", l, err)
	}
	if _, err := DecryptLaunch(secret, token, now.Add(2*time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: %v", err)
	}
	flipped := []byte(token)
	flipped[len(flipped)-5] ^= 1
	if _, err := DecryptLaunch(secret, string(flipped), now); !errors.Is(err, ErrInvalid) {
		t.Errorf("tampered: %v", err)
	}
	if _, err := DecryptLaunch(secret, "4"+token[1:], now); !errors.Is(err, ErrInvalid) {
		t.Errorf("domain swapped: %v", err)
	}
	for _, bad := range []string{"", "3", "3.", "x.abc", "3.!!!"} {
		if _, err := DecryptLaunch(secret, bad, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestRecordingLink(t *testing.T) {
	exp := now.Add(time.Hour)
	u, _ := url.Parse(RecordingURL("http://h", secret, 3, 9, exp))
	q := u.Query()
	if u.Path != "/recordings/9" {
		t.Fatalf("path %s", u.Path)
	}
	if err := VerifyRecording(secret, 3, 9, exp.Unix(), q.Get("sig"), now); err != nil {
		t.Fatal(err)
	}
	if err := VerifyRecording(secret, 3, 10, exp.Unix(), q.Get("sig"), now); !errors.Is(err, ErrInvalid) {
		t.Errorf("other recording: %v", err)
	}
	if err := VerifyRecording(secret, 3, 9, exp.Unix()+60, q.Get("sig"), now); !errors.Is(err, ErrInvalid) {
		t.Errorf("extended expiry: %v", err)
	}
	if err := VerifyRecording(secret, 3, 9, exp.Unix(), q.Get("sig"), exp); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: %v", err)
	}
}

func TestSessionToken(t *testing.T) {
	token := SessionToken(secret, claims)
	if d, err := EncryptedDomain(token); err != nil || d != 3 {
		t.Fatalf("domain %d %v", d, err)
	}
	l, err := OpenSession(secret, token, now)
	if err != nil || !l.Expires.Equal(claims.Expires) {
		t.Fatalf("open: %+v %v", l, err)
	}
	if l.Expires = claims.Expires; l != claims {
		t.Fatalf("claims changed: %+v", l)
	}
	if _, err := OpenSession(secret, token, now.Add(2*time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: %v", err)
	}
	// A session token does not open as a launch, nor a launch as a session.
	if _, err := DecryptLaunch(secret, token, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("session opened as launch: %v", err)
	}
	launch := strings.TrimPrefix(EncryptedLaunchURL("http://h", secret, claims), "http://h/classroom/e/")
	if _, err := OpenSession(secret, launch, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("launch opened as session: %v", err)
	}
	if _, err := OpenSession([]byte("another domain's secret, 32 byte"), token, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("other secret: %v", err)
	}
}

func TestFileLink(t *testing.T) {
	raw := FileURL("", secret, 3, 12, now.Add(time.Hour))
	u, err := url.Parse(raw)
	if err != nil || u.Path != "/classroom/files/12" {
		t.Fatalf("%s %v", raw, err)
	}
	q := u.Query()
	exp, _ := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err := VerifyFile(secret, 3, 12, exp, q.Get("sig"), now); err != nil {
		t.Fatalf("verify: %v", err)
	}
	if err := VerifyFile(secret, 3, 13, exp, q.Get("sig"), now); !errors.Is(err, ErrInvalid) {
		t.Errorf("other id: %v", err)
	}
	if err := VerifyRecording(secret, 3, 12, exp, q.Get("sig"), now); !errors.Is(err, ErrInvalid) {
		t.Errorf("a file link verified as a recording link: %v", err)
	}
	if err := VerifyFile(secret, 3, 12, exp, q.Get("sig"), now.Add(2*time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: %v", err)
	}
}

// TestEmptySecretVerifiesNothing: links signed with an empty secret never
// verify (issue 12, item 14).
func TestEmptySecretVerifiesNothing(t *testing.T) {
	l := Launch{Domain: 1, Class: 2, UserID: "7", Expires: now.Add(time.Hour)}
	for _, secret := range [][]byte{nil, {}, []byte("short")} {
		u, _ := url.Parse(SignedLaunchURL("http://x", secret, l))
		got, sig, err := ParseSignedLaunch("2", u.Query())
		if err == nil && VerifySignedLaunch(secret, got, sig, now) == nil {
			t.Errorf("a launch link signed with secret %q verifies", secret)
		}
		tok := strings.TrimPrefix(EncryptedLaunchURL("http://x", secret, l), "http://x/classroom/e/")
		if _, err := DecryptLaunch(secret, tok, now); err == nil {
			t.Errorf("an encrypted link sealed with secret %q opens", secret)
		}
		ru, _ := url.Parse(RecordingURL("http://x", secret, 1, 3, now.Add(time.Hour)))
		exp, _ := strconv.ParseInt(ru.Query().Get("expires"), 10, 64)
		if VerifyRecording(secret, 1, 3, exp, ru.Query().Get("sig"), now) == nil {
			t.Errorf("a recording link signed with secret %q verifies", secret)
		}
	}
}
