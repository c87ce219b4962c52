package cert

import (
	"encoding/binary"
	"sync"

	"github.com/signintech/gopdf/fontmaker/core"
)

// The PDF writer's font subset includes the components of composite
// glyphs only one level deep, so a glyph made of a composite (in DejaVu
// Sans, many Arabic presentation forms and the alefs with hamza) prints
// with pieces missing. brokenRunes lists the right-to-left runes whose
// glyph is such a two-level composite; the shaper avoids them.
var brokenRunes = sync.OnceValue(func() map[rune]bool {
	out := map[rune]bool{}
	var p core.TTFParser
	if err := p.ParseFontData(dejaVuSans); err != nil {
		return out
	}
	tables := p.GetTables()
	head, loca, glyf := tables["head"].Offset, tables["loca"].Offset, tables["glyf"].Offset
	fd := p.FontData()
	if int(head)+52 > len(fd) {
		return out
	}
	long := binary.BigEndian.Uint16(fd[head+50:]) != 0
	offset := func(g uint) uint {
		if long {
			return uint(binary.BigEndian.Uint32(fd[loca+g*4:]))
		}
		return uint(binary.BigEndian.Uint16(fd[loca+g*2:])) * 2
	}
	composite := func(g uint) bool {
		return offset(g) != offset(g+1) && int16(binary.BigEndian.Uint16(fd[glyf+offset(g):])) < 0
	}
	// components lists the glyphs a composite glyph is made of.
	components := func(g uint) []uint {
		var cs []uint
		o := glyf + offset(g) + 10
		for {
			flags := binary.BigEndian.Uint16(fd[o:])
			cs = append(cs, uint(binary.BigEndian.Uint16(fd[o+2:])))
			if flags&0x20 == 0 { // MORE_COMPONENTS
				return cs
			}
			n := uint(2)
			if flags&0x01 != 0 { // ARG_1_AND_2_ARE_WORDS
				n = 4
			}
			switch {
			case flags&0x08 != 0: // WE_HAVE_A_SCALE
				n += 2
			case flags&0x40 != 0: // WE_HAVE_AN_X_AND_Y_SCALE
				n += 4
			case flags&0x80 != 0: // WE_HAVE_A_TWO_BY_TWO
				n += 8
			}
			o += 4 + n
		}
	}
	for r, g := range p.Chars() {
		if !(r >= 0x0590 && r <= 0x06FF || r >= 0xFB1D && r <= 0xFEFF) || !composite(g) {
			continue
		}
		for _, c := range components(g) {
			if composite(c) {
				out[rune(r)] = true
				break
			}
		}
	}
	return out
})
