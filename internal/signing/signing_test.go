package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	secret = []byte("0123456789abcdef0123456789abcdef")
	now    = time.Unix(2_000_000_000, 0)
	claims = Launch{Domain: 3, Class: 42, Occurrence: 2, UserID: "u-7", UserName: "Ann & Bo", Teacher: true,
		Lesson: "Lesson 1", Course: "Maths", Extend: 1, Expires: now.Add(time.Hour)}
)

// launchMessage is the text a plain launch URL's signature covers.
func launchMessage(l Launch) string { return string(appendLaunchMessage(nil, l)) }

// TestLaunchMessage pins the text a plain launch URL's signature covers:
// links already given out verify only while it stays the same.
func TestLaunchMessage(t *testing.T) {
	student := Launch{Domain: 12, Class: 7, Occurrence: 0, UserID: "42", UserName: "Zoë/Ann?", Lesson: "", Course: "a+b=c",
		Extend: 0, Expires: time.Unix(1_900_000_000, 0)}
	for _, tc := range []struct {
		l    Launch
		want string
	}{
		{claims, "launch-v1\n3\n42\n2\nu-7\nAnn+%26+Bo\n1\nLesson+1\nMaths\n1\n2000003600"},
		{student, "launch-v1\n12\n7\n0\n42\nZo%C3%AB%2FAnn%3F\n0\n\na%2Bb%3Dc\n0\n1900000000"},
	} {
		if got := launchMessage(tc.l); got != tc.want {
			t.Errorf("message of %+v:\n got %q\nwant %q", tc.l, got, tc.want)
		}
	}
}

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
	// The token is base64url, so a short claim ("u-7") can turn up in it
	// by chance: look for the claims as a query or a JSON text would
	// show them, in forms base64url cannot spell.
	for _, clear := range []string{"?", "userId", "Ann & Bo", "Ann+%26+Bo", "Ann%20%26%20Bo", `"u-7"`, "Maths"} {
		if strings.Contains(raw, clear) {
			t.Fatalf("encrypted url shows its claims (%q): %s", clear, raw)
		}
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

// launches are claims whose fields need escaping in a query and in JSON,
// for the tests that compare a link or a token with the standard encoders.
var launches = []Launch{
	claims,
	{},
	{Domain: -1, Class: 9223372036854775807, Occurrence: -3, UserID: "a&b=c?d#e", UserName: "Zoë <b>\"x\"</b>\n\t\u2028",
		Lesson: "100% + 1", Course: "\xff\x00 /é", Extend: -1, Expires: time.Date(2031, 2, 3, 4, 5, 6, 789, time.FixedZone("", 5400))},
	{Domain: 1, UserID: " ", UserName: "~!*'()", Lesson: "a+b", Course: "%2F", Expires: time.Unix(0, 0).UTC()},
}

// TestSignedLaunchQuery: a plain launch link's query is byte for byte
// what url.Values.Encode makes of the same parameters.
func TestSignedLaunchQuery(t *testing.T) {
	for _, l := range launches {
		raw := SignedLaunchURL("https://lms.example.com", secret, l)
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		q := url.Values{}
		q.Set("d", strconv.FormatInt(l.Domain, 10))
		q.Set("o", strconv.Itoa(l.Occurrence))
		q.Set("userId", l.UserID)
		q.Set("userName", l.UserName)
		q.Set("role", l.Role())
		q.Set("lessonName", l.Lesson)
		q.Set("courseName", l.Course)
		q.Set("isExtend", strconv.Itoa(l.Extend))
		q.Set("expires", strconv.FormatInt(l.Expires.Unix(), 10))
		q.Set("sig", u.Query().Get("sig"))
		if u.RawQuery != q.Encode() {
			t.Errorf("query\n%s\nwant\n%s", u.RawQuery, q.Encode())
		}
		if want := "/classroom/" + strconv.FormatInt(l.Class, 10); u.Path != want {
			t.Errorf("path %s, want %s", u.Path, want)
		}
	}
}

// TestAppendClaims: a token's claims are byte for byte what json.Marshal
// writes, and open as json.Unmarshal reads them.
func TestAppendClaims(t *testing.T) {
	for _, l := range launches {
		want, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendClaims(nil, l); string(got) != string(want) {
			t.Errorf("claims\n%s\nwant\n%s", got, want)
		}
		tok := strings.TrimPrefix(EncryptedLaunchURL("", secret, l), "/classroom/e/")
		got, err := DecryptLaunch(secret, tok, l.Expires.Add(-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var sealed Launch // invalid UTF-8 reads back as U+FFFD
		if err := json.Unmarshal(want, &sealed); err != nil {
			t.Fatal(err)
		}
		if launchMessage(got) != launchMessage(sealed) || !got.Expires.Equal(l.Expires) {
			t.Errorf("opened %+v, sealed %+v", got, sealed)
		}
	}
}

// BenchmarkLaunchURLs makes the two launch links of a getclasslaunch.
func BenchmarkLaunchURLs(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		SignedLaunchURL("https://lms.example.com", secret, claims)
		EncryptedLaunchURL("https://lms.example.com", secret, claims)
	}
}

// TestDeriveKept: a kept key is the HMAC of its purpose under its secret,
// for more secrets than are kept at once, asked for twice each.
func TestDeriveKept(t *testing.T) {
	for round := range 2 {
		for i := range maxDerived + 100 {
			s := []byte(fmt.Sprintf("secret %d of the test, long enough", i))
			for _, purpose := range []string{"launch-sign-v1", "launch-encrypt-v1"} {
				m := hmac.New(sha256.New, s)
				m.Write([]byte(purpose))
				if got := derive(s, purpose).key; !hmac.Equal(got, m.Sum(nil)) {
					t.Fatalf("round %d, secret %d, %s: a wrong key", round, i, purpose)
				}
			}
		}
	}
	if n := len(derived); n > maxDerived {
		t.Errorf("%d keys kept, at most %d", n, maxDerived)
	}
}

// TestSealLongClaims: claims of every length around the seal's first
// buffer (512 bytes) open as sealed, from many goroutines at once (the
// AEADs and MACs are pooled, one caller each).
func TestSealLongClaims(t *testing.T) {
	var wg sync.WaitGroup
	for n := 380; n < 560; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := claims
			l.UserName = strings.Repeat("é", n/2) + strings.Repeat("a", n%2)
			token := strings.TrimPrefix(EncryptedLaunchURL("http://h", secret, l), "http://h/classroom/e/")
			got, err := DecryptLaunch(secret, token, now)
			if err != nil || got.UserName != l.UserName {
				t.Errorf("%d bytes: %v, name of %d bytes", n, err, len(got.UserName))
			}
			u, err := url.Parse(SignedLaunchURL("http://h", secret, l))
			if err != nil {
				t.Error(err)
				return
			}
			parsed, sig, err := ParseSignedLaunch("42", u.Query())
			if err != nil || VerifySignedLaunch(secret, parsed, sig, now) != nil {
				t.Errorf("%d bytes: the signed link does not verify (%v)", n, err)
			}
		}()
	}
	wg.Wait()
}
