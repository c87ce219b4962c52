package sfu

import (
	"slices"
	"testing"
)

// levels makes packets every step ms from `from` to `to` (excluded), all
// at one level.
func levels(from, to, step int64, level uint8) []levelAt {
	var out []levelAt
	for t := from; t < to; t += step {
		out = append(out, levelAt{t, level})
	}
	return out
}

type levelAt struct {
	t     int64
	level uint8
}

// beeps makes a beep of on ms every period ms (loud, then silence) from
// `from` to `to`, in 20 ms packets: Chromium's fake microphone.
func beeps(from, to, period, on int64) []levelAt {
	var out []levelAt
	for t := from; t < to; t += 20 {
		lv := uint8(127)
		if (t-from)%period < on {
			lv = 10
		}
		out = append(out, levelAt{t, lv})
	}
	return out
}

func TestSpeechHysteresis(t *testing.T) {
	type change struct {
		t        int64
		speaking bool
	}
	cat := func(parts ...[]levelAt) []levelAt { return slices.Concat(parts...) }
	tests := []struct {
		name    string
		packets []levelAt
		want    []change
	}{
		{"silence never speaks", levels(0, 5000, 20, 127), nil},
		{"background noise below the threshold", levels(0, 5000, 20, voiceLevel+1), nil},
		{"voice at the threshold is voice", levels(0, 400, 20, voiceLevel), []change{{300, true}}},
		{"a click is not speech", cat(levels(0, 100, 20, 5), levels(100, 3000, 20, 127)), nil},
		{"voice starts speaking after 300 ms", levels(0, 1000, 20, 20), []change{{300, true}}},
		{"speech stops 1 s after the last voice",
			cat(levels(0, 2000, 20, 20), levels(2000, 4000, 20, 127)),
			[]change{{300, true}, {2980, false}}},
		{"pauses between words shorter than 1 s do not stop it",
			cat(levels(0, 600, 20, 20), levels(600, 1500, 20, 127), levels(1500, 2000, 20, 20), levels(2000, 2500, 20, 127)),
			[]change{{300, true}}},
		{"beeps of 100 ms every 500 ms are speech that goes on",
			beeps(0, 5000, 500, 100), []change{{500, true}}},
		{"two clicks 1 s apart are not speech",
			cat(levels(0, 40, 20, 5), levels(40, 1040, 20, 127), levels(1040, 1080, 20, 5), levels(1080, 3000, 20, 127)), nil},
		{"speaking again after a silence needs 300 ms of voice again",
			cat(levels(0, 500, 20, 20), levels(500, 2000, 20, 127), levels(2000, 2200, 20, 20), levels(2200, 2400, 20, 127), levels(2400, 3000, 20, 20)),
			[]change{{300, true}, {1480, false}, {2400, true}}},
		{"the voice activity bit is ignored", levels(0, 400, 20, 0x80|20), []change{{300, true}}},
		{"a packet gap ends speech at the next packet",
			cat(levels(0, 1000, 20, 20), levels(5000, 5100, 20, 127)),
			[]change{{300, true}, {5000, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s speech
			var got []change
			for _, p := range tt.packets {
				if s.level(p.t, p.level) {
					got = append(got, change{p.t, s.speaking})
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("changes %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAudioLevel(t *testing.T) {
	tests := []struct {
		ext   []byte
		level uint8
		ok    bool
	}{
		{nil, 0, false},
		{[]byte{0}, 0, true},
		{[]byte{127}, 127, true},
		{[]byte{0x80 | 33}, 33, true},
	}
	for _, tt := range tests {
		lv, ok := audioLevel(tt.ext)
		if lv != tt.level || ok != tt.ok {
			t.Errorf("audioLevel(%v) = %d, %v; want %d, %v", tt.ext, lv, ok, tt.level, tt.ok)
		}
	}
}
