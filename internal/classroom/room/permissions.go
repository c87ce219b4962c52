package room

// Permissions a user may hold. The class settings decide them; the
// teacher may override some per student (media, screen, draw).
const (
	permOp          = "op"           // moderate and control the room
	permAudio       = "audio"        // publish a microphone
	permVideo       = "video"        // publish a camera
	permScreen      = "screen"       // share a screen
	permChat        = "chat"         // send group chat
	permChatPrivate = "chat:private" // send private messages to anyone
	permDraw        = "draw"         // draw on the whiteboard
	permFiles       = "files"        // share files
	permRecordTab   = "record:tab"   // publish the classroom tab for the recording
)

// can is the one place the class settings become permissions:
//
//   - isBoard 1 has no media and no chat; isBoard 2 has chat but no media.
//   - The teacher may do everything the settings allow.
//   - isCorporate 0: students publish camera and microphone only when the
//     teacher allows it; 1: they may, unless the teacher withdraws it.
//   - isScreenshare 0: nobody shares a screen; 1: the teacher, and students
//     the teacher allows.
//   - isPrivateChat 0: anyone may message anyone privately; 1: students
//     only to a teacher (checked per message in chatAllowed).
//   - Students draw, and share files, only when the teacher allows it
//     (one by one, or all at once).
func (r *Room) can(u *user, perm string) bool {
	c := r.class
	media := c.IsBoard == 0
	chat := c.IsBoard != 1
	switch perm {
	case permOp:
		return u.teacher
	case permAudio, permVideo:
		if !media {
			return false
		}
		if u.teacher {
			return true
		}
		return override(u.media, c.IsCorporate == 1)
	case permScreen:
		if !media || c.IsScreenshare != 1 {
			return false
		}
		return u.teacher || override(u.screen, false)
	case permChat:
		return chat
	case permChatPrivate:
		return chat && (u.teacher || c.IsPrivateChat == 0)
	case permDraw:
		return u.teacher || override(u.draw, r.drawAll)
	case permFiles:
		return u.teacher || override(u.files, r.filesAll)
	case permRecordTab:
		// isRecordingLayout 1: the teacher's browser captures its tab as
		// the recording's picture, in every record mode that records.
		return u.teacher && media && c.IsRecordingLayout == 1 && r.recordSetting() != RecordOff && r.hub.Recorder != nil
	case permRecord:
		mode := r.recordSetting()
		return u.teacher && r.hub.Recorder != nil && (mode == RecordManual || mode == RecordAuto)
	}
	return false
}

func override(v *bool, def bool) bool {
	if v != nil {
		return *v
	}
	return def
}

// permissions lists what u may do, for the welcome message.
func (r *Room) permissions(u *user) []string {
	out := []string{}
	for _, p := range []string{permOp, permAudio, permVideo, permScreen, permChat, permChatPrivate, permDraw, permFiles, permRecord, permRecordTab} {
		if r.can(u, p) {
			out = append(out, p)
		}
	}
	return out
}

// chatAllowed says whether from may send a message to to ("" is
// everyone), and if not, why.
func (r *Room) chatAllowed(from *user, to *user) (bool, string) {
	if !r.can(from, permChat) {
		return false, "Chat is off in this class."
	}
	if to == nil {
		return true, ""
	}
	if r.can(from, permChatPrivate) || to.teacher {
		return true, ""
	}
	return false, "Private messages between students are off in this class."
}

// labelPerm is the permission publishing a stream of label needs.
func labelPerm(label string) string {
	switch label {
	case LabelCamera:
		return permVideo
	case LabelMic:
		return permAudio
	case LabelScreen:
		return permScreen
	case LabelRecording:
		return permRecordTab
	}
	return ""
}
