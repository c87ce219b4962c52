package sfu

// Who is speaking comes from the audio level header extension
// (urn:ietf:params:rtp-hdrext:ssrc-audio-level, RFC 6464) that browsers put
// on every audio packet: the level of the packet's sound in -dBov, 0 the
// loudest, 127 silence. Nothing is decoded.
const (
	// voiceLevel is the loudest level that is not voice: a packet at
	// -40 dBov or louder is voice (speech is about -20 to -35 dBov, a
	// quiet room about -60 and below).
	voiceLevel = 40
	// speakAfter is how long (ms) voice must go on before its sender
	// counts as speaking: a cough or a click does not.
	speakAfter = 300
	// quietAfter is how long (ms) without voice ends speaking. It also
	// bridges the pauses between words, so voice that goes on with gaps
	// shorter than this counts as going on.
	quietAfter = 1000
)

// speech follows one audio track's levels and decides, with hysteresis,
// whether its sender is speaking. The zero value is quiet.
type speech struct {
	speaking bool
	voiced   bool  // some voice was heard, at first and last
	first    int64 // the first voice of the current run (ms)
	last     int64 // the latest voice (ms)
}

// level takes a packet's audio level (RFC 6464: the low 7 bits of the
// extension's byte) at time t (ms, not decreasing), and reports whether
// the speaking state changed with it.
//
// Speaking starts when voice has gone on for speakAfter: a run of voiced
// packets whose gaps are each shorter than quietAfter, from its first to
// its latest packet. It stops quietAfter after the last voiced packet.
func (s *speech) level(t int64, level uint8) bool {
	voice := level&0x7f <= voiceLevel
	if voice {
		if !s.voiced || t-s.last >= quietAfter {
			s.first = t // a new run
		}
		s.voiced, s.last = true, t
	}
	switch {
	case !s.speaking && voice && t-s.first >= speakAfter:
		s.speaking = true
		return true
	case s.speaking && t-s.last >= quietAfter:
		s.speaking = false
		return true
	}
	return false
}

// audioLevel returns the level in a packet's audio level extension.
func audioLevel(ext []byte) (uint8, bool) {
	if len(ext) < 1 {
		return 0, false
	}
	return ext[0] & 0x7f, true
}
