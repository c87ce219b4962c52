// Package signing makes and checks the classroom's links: launch URLs, in
// a plain signed form (HMAC-SHA256, parameters visible) and an encrypted
// form (AES-256-GCM, opaque), and expiring download links for recordings.
// Every key is derived from the domain's own launch secret, so one
// domain's links never verify under another's.
package signing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-lms/lectern/internal/jsonx"
)

// Errors a link check returns. Pages show a generic text for all of them.
var (
	ErrInvalid = errors.New("link is invalid")
	ErrExpired = errors.New("link has expired")
)

// Launch is what a launch URL carries.
type Launch struct {
	Domain     int64     `json:"d"`
	Class      int64     `json:"c"`
	Occurrence int       `json:"o"`
	UserID     string    `json:"u"`
	UserName   string    `json:"n"`
	Teacher    bool      `json:"t"`
	Lesson     string    `json:"l"`
	Course     string    `json:"cn"`
	Extend     int       `json:"x"`
	Expires    time.Time `json:"e"`
}

// Role is "teacher" or "student".
func (l Launch) Role() string {
	if l.Teacher {
		return "teacher"
	}
	return "student"
}

// derive returns the key of secret for purpose. A getclasslaunch derives
// two keys, so derived keys are kept (by secret and purpose); the map is
// emptied when it reaches maxDerived keys, which a server with that many
// domains' links in use recomputes at the cost of an HMAC each.
//
// The map's key is written in a buffer on the stack and looked up as
// string(id), which makes no copy: building it as a string was 50 of the
// 70 ms that derive took in a 12 s profile of getclasslaunch.
func derive(secret []byte, purpose string) *key {
	var buf [128]byte
	id := append(append(append(buf[:0], purpose...), 0), secret...)
	derivedMu.RLock()
	k, ok := derived[string(id)]
	derivedMu.RUnlock()
	if ok {
		return k
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	k = &key{key: m.Sum(nil)}
	derivedMu.Lock()
	if len(derived) >= maxDerived {
		clear(derived)
	}
	derived[string(id)] = k
	derivedMu.Unlock()
	return k
}

const maxDerived = 4096

var (
	derivedMu sync.RWMutex
	derived   = map[string]*key{} // purpose "\x00" secret: its key
)

// key is a derived key and the MACs and AEADs made with it, kept for
// reuse: making them was a third of a launch link's allocations. A pool
// gives each caller one of its own, so nothing is shared between
// goroutines while in use.
type key struct {
	key   []byte // never written to
	macs  sync.Pool
	aeads sync.Pool
}

// mac returns the hex HMAC-SHA256 of msg under k.
func (k *key) mac(msg string) string {
	return string(k.appendMAC(nil, []byte(msg)))
}

// appendMAC appends the hex HMAC-SHA256 of msg under k to dst.
func (k *key) appendMAC(dst, msg []byte) []byte {
	m, _ := k.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, k.key)
	}
	m.Write(msg)
	var sum [sha256.Size]byte
	dst = hex.AppendEncode(dst, m.Sum(sum[:0]))
	m.Reset()
	k.macs.Put(m)
	return dst
}

// aead returns an AES-256-GCM AEAD of k, to give back with putAEAD.
func (k *key) aead() cipher.AEAD {
	if a, ok := k.aeads.Get().(cipher.AEAD); ok {
		return a
	}
	block, err := aes.NewCipher(k.key)
	if err != nil {
		panic(err) // a 32-byte key never fails
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return a
}

func (k *key) putAEAD(a cipher.AEAD) { k.aeads.Put(a) }

// appendLaunchMessage appends the canonical text a plain launch URL's
// signature covers: every field, escaped, in a fixed order, one a line
// (TestLaunchMessage).
func appendLaunchMessage(b []byte, l Launch) []byte {
	b = append(b, "launch-v1\n"...)
	b = strconv.AppendInt(b, l.Domain, 10)
	b = append(b, '\n')
	b = strconv.AppendInt(b, l.Class, 10)
	b = append(b, '\n')
	b = strconv.AppendInt(b, int64(l.Occurrence), 10)
	b = append(append(b, '\n'), url.QueryEscape(l.UserID)...)
	b = append(append(b, '\n'), url.QueryEscape(l.UserName)...)
	if l.Teacher {
		b = append(b, "\n1\n"...)
	} else {
		b = append(b, "\n0\n"...)
	}
	b = append(b, url.QueryEscape(l.Lesson)...)
	b = append(append(b, '\n'), url.QueryEscape(l.Course)...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, int64(l.Extend), 10)
	b = append(b, '\n')
	return strconv.AppendInt(b, l.Expires.Unix(), 10)
}

// launchMAC appends the signature of l's plain launch URL to dst. The
// message is written in a pooled buffer (bufs).
func launchMAC(dst, secret []byte, l Launch) []byte {
	bp := bufs.Get().(*[]byte)
	msg := appendLaunchMessage((*bp)[:0], l)
	dst = derive(secret, "launch-sign-v1").appendMAC(dst, msg)
	putBuf(bp, msg)
	return dst
}

// SignedLaunchURL returns base/classroom/{class}?...&sig=... with the
// claims in the clear. The query is what url.Values.Encode gives, keys
// in byte order, written without building the map (TestSignedLaunchQuery).
func SignedLaunchURL(base string, secret []byte, l Launch) string {
	b := make([]byte, 0, 256)
	b = append(b, strings.TrimRight(base, "/")...)
	b = append(b, "/classroom/"...)
	b = strconv.AppendInt(b, l.Class, 10)
	b = appendQuery(b, "?courseName=", l.Course)
	b = append(b, "&d="...)
	b = strconv.AppendInt(b, l.Domain, 10)
	b = append(b, "&expires="...)
	b = strconv.AppendInt(b, l.Expires.Unix(), 10)
	b = append(b, "&isExtend="...)
	b = strconv.AppendInt(b, int64(l.Extend), 10)
	b = appendQuery(b, "&lessonName=", l.Lesson)
	b = append(b, "&o="...)
	b = strconv.AppendInt(b, int64(l.Occurrence), 10)
	b = append(b, "&role="...)
	b = append(b, l.Role()...)
	b = append(b, "&sig="...)
	b = launchMAC(b, secret, l)
	b = appendQuery(b, "&userId=", l.UserID)
	b = appendQuery(b, "&userName=", l.UserName)
	return string(b)
}

// appendQuery appends key (already escaped, with its separator and '=')
// and v escaped as a query value.
func appendQuery(b []byte, key, v string) []byte {
	return append(append(b, key...), url.QueryEscape(v)...)
}

// ParseSignedLaunch reads the claims of a plain launch URL (the class id
// from the path, the rest from the query) without checking them; the
// domain id tells the caller which secret to pass to Verify.
func ParseSignedLaunch(classID string, q url.Values) (Launch, string, error) {
	var l Launch
	var err error
	num := func(s string) int64 {
		n, e := strconv.ParseInt(s, 10, 64)
		if e != nil && err == nil {
			err = ErrInvalid
		}
		return n
	}
	l.Class = num(classID)
	l.Domain = num(q.Get("d"))
	l.Occurrence = int(num(q.Get("o")))
	l.UserID, l.UserName = q.Get("userId"), q.Get("userName")
	switch q.Get("role") {
	case "teacher":
		l.Teacher = true
	case "student":
	default:
		err = ErrInvalid
	}
	l.Lesson, l.Course = q.Get("lessonName"), q.Get("courseName")
	l.Extend = int(num(q.Get("isExtend")))
	l.Expires = time.Unix(num(q.Get("expires")), 0)
	return l, q.Get("sig"), err
}

// MinSecret is the shortest secret a link verifies with: an empty or
// truncated secret (a corrupt row) verifies nothing.
const MinSecret = 16

// VerifySignedLaunch checks a plain launch URL's signature and expiry.
func VerifySignedLaunch(secret []byte, l Launch, sig string, now time.Time) error {
	if len(secret) < MinSecret {
		return ErrInvalid
	}
	var want [2 * sha256.Size]byte
	if !hmac.Equal(launchMAC(want[:0], secret, l), []byte(sig)) {
		return ErrInvalid
	}
	if !now.Before(l.Expires) {
		return ErrExpired
	}
	return nil
}

// EncryptedLaunchURL returns base/classroom/e/{domain}.{token}: the
// claims sealed with AES-256-GCM, the domain id authenticated as
// additional data.
func EncryptedLaunchURL(base string, secret []byte, l Launch) string {
	var out [512]byte
	b := append(append(out[:0], strings.TrimRight(base, "/")...), "/classroom/e/"...)
	return string(appendSeal(b, secret, "launch-encrypt-v1", l))
}

// SessionToken seals a verified launch into the token a classroom page
// gives its WebSocket: the same claims as the launch, under a key of its
// own, so a session token is not a launch link and a launch token is not
// a session.
func SessionToken(secret []byte, l Launch) string {
	return seal(secret, "session-v1", l)
}

// EncryptedDomain returns the domain id of an encrypted launch token or a
// session token, so the caller can find the secret to open it with.
func EncryptedDomain(token string) (int64, error) {
	domain, _, ok := strings.Cut(token, ".")
	n, err := strconv.ParseInt(domain, 10, 64)
	if !ok || err != nil {
		return 0, ErrInvalid
	}
	return n, nil
}

// DecryptLaunch opens an encrypted launch token and checks its expiry.
func DecryptLaunch(secret []byte, token string, now time.Time) (Launch, error) {
	return open(secret, "launch-encrypt-v1", token, now)
}

// OpenSession opens a session token and checks its expiry.
func OpenSession(secret []byte, token string, now time.Time) (Launch, error) {
	return open(secret, "session-v1", token, now)
}

// seal returns {domain}.{base64url(nonce|ciphertext)} of l's claims under
// a key derived from secret for purpose.
func seal(secret []byte, purpose string, l Launch) string {
	var out [256]byte
	return string(appendSeal(out[:0], secret, purpose, l))
}

// appendSeal appends seal's token to dst. The claims are written and
// sealed in a pooled buffer (bufs), after the domain (the sealing's additional
// data) and the nonce: its allocations were half of what sealing cost.
func appendSeal(dst, secret []byte, purpose string, l Launch) []byte {
	k := derive(secret, purpose)
	aead := k.aead()
	defer k.putAEAD(aead)
	bp := bufs.Get().(*[]byte)
	b := strconv.AppendInt((*bp)[:0], l.Domain, 10)
	nd, ns := len(b), aead.NonceSize()
	b = append(b, make([]byte, ns)...)
	rand.Read(b[nd:])
	b = appendClaims(b, l)
	b = slices.Grow(b, aead.Overhead()) // sealed where it is
	sealed := aead.Seal(b[nd:nd+ns], b[nd:nd+ns], b[nd+ns:], b[:nd])
	dst = append(append(dst, b[:nd]...), '.')
	dst = base64.RawURLEncoding.AppendEncode(dst, sealed)
	putBuf(bp, b)
	return dst
}

// bufs are the buffers launch links and tokens are written in before
// they are signed or sealed.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// putBuf gives back a buffer of bufs, now b; one grown past maxBuf by
// long claims is left to the collector.
func putBuf(bp *[]byte, b []byte) {
	if cap(b) <= maxBuf {
		*bp = b[:0]
		bufs.Put(bp)
	}
}

const maxBuf = 4096

// appendClaims appends l as json.Marshal writes it (TestAppendClaims),
// without reflection. An Expires outside years 0 to 9999, which
// json.Marshal refuses, is written all the same and refused when opened.
func appendClaims(b []byte, l Launch) []byte {
	b = append(b, `{"d":`...)
	b = strconv.AppendInt(b, l.Domain, 10)
	b = append(b, `,"c":`...)
	b = strconv.AppendInt(b, l.Class, 10)
	b = append(b, `,"o":`...)
	b = strconv.AppendInt(b, int64(l.Occurrence), 10)
	b = append(b, `,"u":`...)
	b = jsonx.AppendString(b, l.UserID)
	b = append(b, `,"n":`...)
	b = jsonx.AppendString(b, l.UserName)
	b = append(b, `,"t":`...)
	b = strconv.AppendBool(b, l.Teacher)
	b = append(b, `,"l":`...)
	b = jsonx.AppendString(b, l.Lesson)
	b = append(b, `,"cn":`...)
	b = jsonx.AppendString(b, l.Course)
	b = append(b, `,"x":`...)
	b = strconv.AppendInt(b, int64(l.Extend), 10)
	b = append(b, `,"e":"`...)
	b = l.Expires.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

func open(secret []byte, purpose, token string, now time.Time) (Launch, error) {
	if len(secret) < MinSecret {
		return Launch{}, ErrInvalid
	}
	domain, enc, ok := strings.Cut(token, ".")
	if !ok {
		return Launch{}, ErrInvalid
	}
	sealed, err := base64.RawURLEncoding.DecodeString(enc)
	k := derive(secret, purpose)
	aead := k.aead()
	defer k.putAEAD(aead)
	if err != nil || len(sealed) < aead.NonceSize() {
		return Launch{}, ErrInvalid
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(domain))
	if err != nil {
		return Launch{}, ErrInvalid
	}
	var l Launch
	if err := json.Unmarshal(plain, &l); err != nil || strconv.FormatInt(l.Domain, 10) != domain {
		return Launch{}, ErrInvalid
	}
	if !now.Before(l.Expires) {
		return Launch{}, ErrExpired
	}
	return l, nil
}

// RecordingURL returns base/recordings/{id}?d=..&expires=..&sig=.., a
// download link that stops working at expires.
func RecordingURL(base string, secret []byte, domain, id int64, expires time.Time) string {
	return downloadURL(base, "/recordings/", "recording-v1", secret, domain, id, expires)
}

// VerifyRecording checks a recording link's signature and expiry.
func VerifyRecording(secret []byte, domain, id int64, expires int64, sig string, now time.Time) error {
	return verifyDownload("recording-v1", secret, domain, id, expires, sig, now)
}

// RecordingFileURL returns base/recordings/{recording}/files/{file}?...,
// the link to one file of a recording (a stream, the event log).
func RecordingFileURL(base string, secret []byte, domain, recording, file int64, expires time.Time) string {
	return downloadURL(base, "/recordings/"+strconv.FormatInt(recording, 10)+"/files/", "recording-file-v1", secret, domain, file, expires)
}

// VerifyRecordingFile checks a recording file's link.
func VerifyRecordingFile(secret []byte, domain, file int64, expires int64, sig string, now time.Time) error {
	return verifyDownload("recording-file-v1", secret, domain, file, expires, sig, now)
}

// FileURL returns base/classroom/files/{id}?d=..&expires=..&sig=.., the
// download link of a file shared in a live room.
func FileURL(base string, secret []byte, domain, id int64, expires time.Time) string {
	return downloadURL(base, "/classroom/files/", "file-v1", secret, domain, id, expires)
}

// VerifyFile checks a shared file's link.
func VerifyFile(secret []byte, domain, id int64, expires int64, sig string, now time.Time) error {
	return verifyDownload("file-v1", secret, domain, id, expires, sig, now)
}

// downloadURL signs a link to path+id for purpose (which also keys the
// HMAC, so one kind of link never verifies as another).
func downloadURL(base, path, purpose string, secret []byte, domain, id int64, expires time.Time) string {
	q := url.Values{}
	q.Set("d", strconv.FormatInt(domain, 10))
	q.Set("expires", strconv.FormatInt(expires.Unix(), 10))
	q.Set("sig", derive(secret, purpose).mac(downloadMessage(purpose, domain, id, expires.Unix())))
	return strings.TrimRight(base, "/") + path + strconv.FormatInt(id, 10) + "?" + q.Encode()
}

func downloadMessage(purpose string, domain, id, expires int64) string {
	return purpose + "\n" + strconv.FormatInt(domain, 10) + "\n" + strconv.FormatInt(id, 10) + "\n" + strconv.FormatInt(expires, 10)
}

func verifyDownload(purpose string, secret []byte, domain, id int64, expires int64, sig string, now time.Time) error {
	if len(secret) < MinSecret {
		return ErrInvalid
	}
	want := derive(secret, purpose).mac(downloadMessage(purpose, domain, id, expires))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return ErrInvalid
	}
	if now.Unix() >= expires {
		return ErrExpired
	}
	return nil
}
