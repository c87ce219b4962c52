package room

// Media forwards one room's audio and video. The room calls it from its
// own goroutine; no method may block on the network. The engine talks
// back through the callbacks given to MediaFactory: send for a
// connection's signalling, ended when a stream stops on its own.
type Media interface {
	// AddConn registers a connection; receive makes the engine offer it
	// every stream, present and future, of the other users.
	AddConn(conn, userID string, receive bool)
	// RemoveConn closes the connection's publications and subscriptions.
	RemoveConn(conn string)
	// Publish accepts a connection's offer for a stream it sends, answers
	// it through send, and returns the stream's room-wide id. Its error
	// text is shown to the user.
	Publish(conn, clientStream, label, sdp string) (string, error)
	// Signal passes on a connection's answer, candidate or close.
	Signal(conn string, sig Signal) error
	// CloseStream ends a stream from the server side.
	CloseStream(id string)
	Close()
}

// SpeakingMedia is a Media that tells when the sound of a stream starts
// or stops being voice (who is speaking). The room calls OnSpeaking once,
// before any stream is published; f may be called from any goroutine and
// must not block.
type SpeakingMedia interface {
	OnSpeaking(f func(streamID string, speaking bool))
}

// MediaFactory makes a room's media engine. send delivers a signal to a
// connection; ended reports a stream that stopped without the room asking
// (its publisher's connection failed). Both may be called from any
// goroutine and must not block.
type MediaFactory func(send func(conn string, sig Signal), ended func(streamID string)) Media

// Stream labels a client may publish.
const (
	LabelCamera = "camera"
	LabelMic    = "mic"
	LabelScreen = "screen"
	// LabelRecording is the teacher's capture of the classroom tab for
	// the recording (isRecordingLayout 1): recorded, never forwarded.
	LabelRecording = "recording"
)
