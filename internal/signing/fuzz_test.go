package signing

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fuzz tests below check the link verifiers: a link made by this
// package reads back as the claims it was made for, and a link that was
// changed verifies only when it still carries exactly the signed claims.

var otherSecret = []byte("fedcba9876543210fedcba9876543210")

// FuzzSignedLaunch makes a plain launch link for fuzzed claims, reads it
// back as the classroom page does, then changes one query parameter.
func FuzzSignedLaunch(f *testing.F) {
	f.Add(int64(3), int64(42), 2, "u-7", "Ann & Bo", true, "Lesson 1", "Maths", 1, int64(2_000_003_600), "role", "student")
	f.Add(int64(3), int64(42), 2, "u-7", "Ann", false, "", "", 0, int64(2_000_003_600), "role", "teacher")
	f.Add(int64(1), int64(1), 0, "a\x00b", "\xff\xfeab", false, "+9:+5", "-0:00", 0, int64(2_000_003_600), "expires", "9223372036854775807")
	f.Add(int64(-1), int64(0), -1, "", "", true, "", "", -1, int64(-62135596800), "d", "+3")
	f.Add(int64(9223372036854775807), int64(2147483648), 2147483647, "x\ny", "a&b=c", true, "%00", "é", 1, int64(9223372036854775807), "userName", "Ann &amp; Bo")
	f.Add(int64(3), int64(42), 2, "u-7", "Ann", true, "L", "C", 1, int64(2_000_003_600), "sig", "")
	f.Add(int64(3), int64(42), 2, "u-7", "Ann", true, "L", "C", 1, int64(2_000_003_600), "o", "02")
	f.Fuzz(func(t *testing.T, domain, class int64, occ int, userID, userName string, teacher bool, lesson, course string,
		extend int, expires int64, key, val string) {
		l := Launch{Domain: domain, Class: class, Occurrence: occ, UserID: userID, UserName: userName, Teacher: teacher,
			Lesson: lesson, Course: course, Extend: extend, Expires: time.Unix(expires, 0)}
		raw := SignedLaunchURL("https://lms.example.com", secret, l)
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("the link %q does not parse: %v", raw, err)
		}
		classID, q := strings.TrimPrefix(u.Path, "/classroom/"), u.Query()
		if u.RawQuery != q.Encode() {
			t.Fatalf("the query %q is not as url.Values encodes it: %q", u.RawQuery, q.Encode())
		}
		if want, err := json.Marshal(l); err == nil && string(appendClaims(nil, l)) != string(want) {
			t.Fatalf("sealed claims %s, json.Marshal writes %s", appendClaims(nil, l), want)
		}
		got, sig, err := ParseSignedLaunch(classID, q)
		if err != nil {
			t.Fatalf("ParseSignedLaunch(%s): %v", raw, err)
		}
		if launchMessage(got) != launchMessage(l) || got.Expires.Unix() != expires {
			t.Fatalf("the link carries %+v, it was made for %+v", got, l)
		}
		want := error(nil)
		if !now.Before(l.Expires) {
			want = ErrExpired
		}
		if err := VerifySignedLaunch(secret, got, sig, now); err != want {
			t.Fatalf("VerifySignedLaunch of a fresh link = %v, want %v", err, want)
		}
		if err := VerifySignedLaunch(otherSecret, got, sig, now); err != ErrInvalid {
			t.Fatalf("another domain's secret verified the link: %v", err)
		}
		if err := VerifySignedLaunch(nil, got, sig, now); err != ErrInvalid {
			t.Fatalf("an empty secret verified the link: %v", err)
		}
		// Change one parameter (or the class id in the path).
		if key == "class" {
			classID = val
		} else {
			q.Set(key, val)
		}
		changed, sig, err := ParseSignedLaunch(classID, q)
		if err != nil {
			return
		}
		if VerifySignedLaunch(secret, changed, sig, now) == nil && launchMessage(changed) != launchMessage(l) {
			t.Fatalf("setting %s=%q verified claims %+v that were never signed", key, val, changed)
		}
	})
}

// FuzzOpenToken opens any token as an encrypted launch and as a session.
// The only claims ever sealed under secret are claims, so a token that
// opens carries exactly them, and never opens as both kinds.
func FuzzOpenToken(f *testing.F) {
	launch := strings.TrimPrefix(EncryptedLaunchURL("", secret, claims), "/classroom/e/")
	session := SessionToken(secret, claims)
	expired := claims
	expired.Expires = now.Add(-time.Second)
	for _, s := range []string{launch, session, SessionToken(secret, expired), SessionToken(otherSecret, claims),
		"3." + strings.Repeat("A", 40), "4" + launch[1:], launch + "=", launch[:len(launch)-1], ".", "", "3.\x00", "\xff.\xfe",
		"9223372036854775808." + launch[2:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		l1, err1 := DecryptLaunch(secret, token, now)
		l2, err2 := OpenSession(secret, token, now)
		for _, err := range []error{err1, err2} {
			if err != nil && err != ErrInvalid && err != ErrExpired {
				t.Fatalf("opening %q: an error other than ErrInvalid or ErrExpired: %v", token, err)
			}
		}
		if err1 == nil && err2 == nil {
			t.Fatalf("%q opened as a launch and as a session", token)
		}
		for _, c := range []struct {
			l   Launch
			err error
		}{{l1, err1}, {l2, err2}} {
			if c.err != nil {
				continue
			}
			if launchMessage(c.l) != launchMessage(claims) {
				t.Fatalf("%q opened as claims %+v that were never sealed", token, c.l)
			}
			if d, err := EncryptedDomain(token); err != nil || d != claims.Domain {
				t.Fatalf("EncryptedDomain(%q) = %d, %v; the token opened for domain %d", token, d, err, claims.Domain)
			}
		}
		if _, err := DecryptLaunch(otherSecret, token, now); err == nil && token == launch {
			t.Fatal("another domain's secret opened the launch token")
		}
	})
}

// downloadKinds are the download links: how each is made and checked.
var downloadKinds = []struct {
	name   string
	url    func(base string, secret []byte, domain, id int64, expires time.Time) string
	verify func(secret []byte, domain, id, expires int64, sig string, now time.Time) error
}{
	{"recording", RecordingURL, VerifyRecording},
	{"recording file", func(base string, secret []byte, domain, id int64, expires time.Time) string {
		return RecordingFileURL(base, secret, domain, 7, id, expires)
	}, VerifyRecordingFile},
	{"file", FileURL, VerifyFile},
}

// FuzzDownloadLink makes each kind of download link, reads it back as the
// pages do (id from the path, d and expires from the query), and checks a
// changed value or signature against each kind's verifier.
func FuzzDownloadLink(f *testing.F) {
	f.Add(int64(3), int64(9), int64(2_000_003_600), int64(0), "", uint8(0))
	f.Add(int64(3), int64(9), int64(2_000_000_000), int64(1), "", uint8(1))
	f.Add(int64(-1), int64(0), int64(9223372036854775807), int64(-9223372036854775808), "00", uint8(2))
	f.Add(int64(2147483648), int64(-5), int64(-62135596800), int64(3), "\x00", uint8(0))
	f.Fuzz(func(t *testing.T, domain, id, expires, delta int64, sig string, kind uint8) {
		k := downloadKinds[int(kind)%len(downloadKinds)]
		raw := k.url("", secret, domain, id, time.Unix(expires, 0))
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("the %s link %q does not parse: %v", k.name, raw, err)
		}
		path := u.Path
		gotID, err1 := strconv.ParseInt(path[strings.LastIndexByte(path, '/')+1:], 10, 64)
		gotDomain, err2 := strconv.ParseInt(u.Query().Get("d"), 10, 64)
		gotExpires, err3 := strconv.ParseInt(u.Query().Get("expires"), 10, 64)
		goodSig := u.Query().Get("sig")
		if err1 != nil || err2 != nil || err3 != nil || gotID != id || gotDomain != domain || gotExpires != expires {
			t.Fatalf("the %s link %q reads back as id %d domain %d expires %d", k.name, raw, gotID, gotDomain, gotExpires)
		}
		want := error(nil)
		if now.Unix() >= expires {
			want = ErrExpired
		}
		if err := k.verify(secret, domain, id, expires, goodSig, now); err != want {
			t.Fatalf("a fresh %s link: %v, want %v", k.name, err, want)
		}
		for _, other := range downloadKinds {
			if other.name != k.name && other.verify(secret, domain, id, expires, goodSig, now) != ErrInvalid {
				t.Fatalf("a %s link verified as a %s link", k.name, other.name)
			}
		}
		if k.verify(otherSecret, domain, id, expires, goodSig, now) != ErrInvalid || k.verify(secret[:MinSecret-1], domain, id, expires, goodSig, now) != ErrInvalid {
			t.Fatalf("a %s link verified under another or a short secret", k.name)
		}
		// A changed value, or a fuzzed signature, verifies only for the
		// values signed with exactly that signature.
		if delta != 0 {
			for _, v := range [][3]int64{{domain + delta, id, expires}, {domain, id + delta, expires}, {domain, id, expires + delta}} {
				if err := k.verify(secret, v[0], v[1], v[2], goodSig, now); !errors.Is(err, ErrInvalid) {
					t.Fatalf("a %s link with a changed value (%v) gave %v", k.name, v, err)
				}
			}
		}
		if sig != goodSig && k.verify(secret, domain, id, expires, sig, now) != ErrInvalid {
			t.Fatalf("a %s link verified with the signature %q", k.name, sig)
		}
	})
}
