package room

import (
	"encoding/json"
	"time"

	"github.com/lectern-lms/lectern/internal/quizsvc"
)

// Protocol is the version of the classroom protocol this package speaks
// (docs/classroom-protocol.md).
const Protocol = 1

// Hello is the first message a client sends.
type Hello struct {
	Type     string  `json:"type"`
	Protocol int     `json:"protocol"`
	Session  string  `json:"session"`
	Resume   *Resume `json:"resume,omitempty"`
}

// Resume names the connection a client had and the last event it saw.
type Resume struct {
	Conn string `json:"conn"`
	Seq  int64  `json:"seq"`
}

// clientMsg is any message after hello; each type uses some fields.
type clientMsg struct {
	raw       []byte
	Type      string          `json:"type"`
	Ref       int64           `json:"ref,omitempty"`
	Text      string          `json:"text,omitempty"`
	To        string          `json:"to,omitempty"`
	Up        bool            `json:"up,omitempty"`
	RTT       float64         `json:"rtt,omitempty"`
	Loss      float64         `json:"loss,omitempty"`
	Action    string          `json:"action,omitempty"`
	UserID    string          `json:"userId,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Stream    string          `json:"stream,omitempty"`
	Label     string          `json:"label,omitempty"`
	SDP       string          `json:"sdp,omitempty"`
	Candidate json.RawMessage `json:"candidate,omitempty"`
}

// Participant is a user of the room as clients see it.
type Participant struct {
	UserID    string `json:"userId"`
	Name      string `json:"name"`
	Role      string `json:"role"`
	Devices   int    `json:"devices"`
	Audio     bool   `json:"audio"`
	Video     bool   `json:"video"`
	Screen    bool   `json:"screen"`
	Hand      bool   `json:"hand"`
	CanAudio  bool   `json:"canAudio"`
	CanVideo  bool   `json:"canVideo"`
	CanScreen bool   `json:"canScreen"`
	CanDraw   bool   `json:"canDraw"`
	CanFiles  bool   `json:"canFiles"`
	Quality   string `json:"quality"`
	// Speaking: the sound of one of the participant's streams is voice.
	Speaking bool `json:"speaking"`
}

// ChatMessage is a chat message as clients see it.
type ChatMessage struct {
	ID       int64     `json:"id"`
	From     string    `json:"from"`
	FromName string    `json:"fromName"`
	To       string    `json:"to"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
}

// StreamInfo is a published stream as clients see it.
type StreamInfo struct {
	ID     string `json:"id"`
	UserID string `json:"userId"`
	Label  string `json:"label"`
}

// Settings are the class settings that shape the room, as the welcome
// message shows them.
type Settings struct {
	Board       int `json:"board"`
	Corporate   int `json:"corporate"`
	Screenshare int `json:"screenshare"`
	PrivateChat int `json:"privateChat"`
	Lang        int `json:"lang"`
	Record      int `json:"record"`
	Extend      int `json:"extend"`
	Seats       int `json:"seats"`
}

// You is the connected user in the welcome message.
type You struct {
	UserID string `json:"userId"`
	Name   string `json:"name"`
	Role   string `json:"role"`
}

// ClassInfo describes the class and sitting in the welcome message.
type ClassInfo struct {
	ID       int64     `json:"id"`
	Title    string    `json:"title"`
	Sitting  int       `json:"sitting"`
	StartsAt time.Time `json:"startsAt"`
	EndsAt   time.Time `json:"endsAt"`
}

// Snapshot is the whole room state a late joiner receives.
type Snapshot struct {
	Participants []Participant `json:"participants"`
	Chat         []ChatMessage `json:"chat"`
	Hands        []string      `json:"hands"`
	Streams      []StreamInfo  `json:"streams"`
	Board        BoardState    `json:"board"`
	Presentation *Presentation `json:"presentation"`
	Files        []FileInfo    `json:"files"`
	Recording    bool          `json:"recording"`
	// DrawAll and FilesAll are the teacher's room-wide switches.
	DrawAll  bool `json:"drawAll"`
	FilesAll bool `json:"filesAll"`
	// Quiz is the in-class quiz, if one was launched in this sitting.
	Quiz *QuizState `json:"quiz,omitempty"`
	// QuizTests are the tests attached to the class: teachers only.
	QuizTests []quizsvc.ClassTest `json:"quizTests,omitempty"`
	// QuizMine are this student's saved answers to the open quiz.
	QuizMine []quizsvc.SavedAnswer `json:"quizMine,omitempty"`
}

// Presentation is the shared state of an open presentation.
type Presentation struct {
	File  int64   `json:"file"`
	Page  int     `json:"page"`
	Zoom  float64 `json:"zoom"`
	Pages int     `json:"pages"`
	URL   string  `json:"url"`
}

// FileInfo is a shared file as clients see it.
type FileInfo struct {
	ID     int64     `json:"id"`
	Name   string    `json:"name"`
	Size   int64     `json:"size"`
	Type   string    `json:"type"`
	Kind   string    `json:"kind"`
	Status string    `json:"status"`
	By     string    `json:"by"`
	ByName string    `json:"byName"`
	At     time.Time `json:"at"`
	URL    string    `json:"url"`
}

// Welcome answers a successful hello.
type Welcome struct {
	Type        string    `json:"type"`
	Protocol    int       `json:"protocol"`
	Conn        string    `json:"conn"`
	Seq         int64     `json:"seq"`
	Resumed     bool      `json:"resumed"`
	You         You       `json:"you"`
	Permissions []string  `json:"permissions"`
	Settings    Settings  `json:"settings"`
	Lang        string    `json:"lang"`
	Class       ClassInfo `json:"class"`
	EndsAt      time.Time `json:"endsAt"`
	// Now is the server's clock, so a client can count down to EndsAt
	// whatever its own clock says.
	Now      time.Time `json:"now"`
	ICE      ICEConfig `json:"ice"`
	Snapshot *Snapshot `json:"snapshot"`
}

// ICEConfig is the RTCConfiguration part a client needs.
type ICEConfig struct {
	ICEServers []ICEServer `json:"iceServers"`
}

// ICEServer is one STUN/TURN server with its credentials.
type ICEServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username,omitempty"`
	Credential string   `json:"credential,omitempty"`
}

// Fail codes: why a hello was refused.
const (
	FailInvalid  = "invalid"
	FailFull     = "full"
	FailRemoved  = "removed"
	FailEnded    = "ended"
	FailProtocol = "protocol"
)

// Fail is the refusal of a hello (and the error Join returns).
type Fail struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (f *Fail) Error() string { return f.Code + ": " + f.Message }

// NewFail returns a Fail with the given code and message.
func NewFail(code, message string) *Fail {
	return &Fail{Type: "fail", Code: code, Message: message}
}

// Error codes of the error message.
const (
	ErrForbidden   = "forbidden"
	ErrInvalid     = "invalid"
	ErrTooLong     = "too-long"
	ErrRateLimited = "rate-limited"
	ErrNotFound    = "not-found"
)

type errorMsg struct {
	Type    string `json:"type"`
	Ref     int64  `json:"ref,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// event is a sequenced change as sent.
type eventMsg struct {
	Type        string       `json:"type"`
	Seq         int64        `json:"seq"`
	Kind        string       `json:"kind"`
	Participant *Participant `json:"participant,omitempty"`
	UserID      string       `json:"userId,omitempty"`
	Message     *ChatMessage `json:"message,omitempty"`
	Hands       []string     `json:"hands,omitempty"`
	EndsAt      *time.Time   `json:"endsAt,omitempty"`
	Stream      *StreamInfo  `json:"stream,omitempty"`
	ID          string       `json:"id,omitempty"`
	Reason      string       `json:"reason,omitempty"`
	By          string       `json:"by,omitempty"`
	// A board event's fields (op, object, page, ids, dx, dy) sit at the
	// top level of the event.
	*boardMsg
	Objects      []*Object     `json:"objects,omitempty"`
	Presentation *Presentation `json:"presentation,omitempty"`
	File         *FileInfo     `json:"file,omitempty"`
	// Closed marks a presentation event that closed it (presentation is
	// then absent).
	Closed bool `json:"closed,omitempty"`
	// Recording is set on a recording event: whether recording is on.
	Recording *bool `json:"recording,omitempty"`
	// Speaking is set on a speaking event: whether UserID speaks.
	Speaking *bool `json:"speaking,omitempty"`
	// Quiz is set on a quiz event: the in-class quiz launched or closed.
	Quiz *QuizState `json:"quiz,omitempty"`
	// DrawAll and FilesAll are set on a switches event.
	DrawAll  *bool `json:"drawAll,omitempty"`
	FilesAll *bool `json:"filesAll,omitempty"`
}

type noticeMsg struct {
	Type   string     `json:"type"`
	Key    string     `json:"key"`
	By     string     `json:"by,omitempty"`
	EndsAt *time.Time `json:"endsAt,omitempty"`
}

// Signal is a WebRTC signalling message between a connection and the
// media engine ("offer", "answer", "ice", "close").
type Signal struct {
	Kind      string          `json:"kind"`
	Stream    string          `json:"stream"`
	UserID    string          `json:"userId,omitempty"`
	Label     string          `json:"label,omitempty"`
	SDP       string          `json:"sdp,omitempty"`
	Candidate json.RawMessage `json:"candidate,omitempty"`
}

type rtcMsg struct {
	Type string `json:"type"`
	Signal
}
