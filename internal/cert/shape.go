package cert

import "unicode"

// The PDF writer draws runes left to right, one glyph each, with no text
// shaping. visualOrder prepares right-to-left text for it: Arabic letters
// become their contextual presentation forms (isolated, initial, medial,
// final, and the lam-alef ligatures), and right-to-left runs are put in
// the order they are seen. It is a small subset of the Unicode
// bidirectional algorithm (one paragraph, no embeddings, numbers kept left
// to right), enough for names and titles. Text without right-to-left
// letters is returned as it is.

// arabicForms are the presentation forms of the basic Arabic letters
// (U+0621-U+064A): isolated, final, initial, medial. Letters with only two
// forms join to the right only (the previous letter) and break the join to
// the next one.
var arabicForms = map[rune][]rune{
	0x0621: {0xFE80},
	0x0622: {0xFE81, 0xFE82},
	0x0623: {0xFE83, 0xFE84},
	0x0624: {0xFE85, 0xFE86},
	0x0625: {0xFE87, 0xFE88},
	0x0626: {0xFE89, 0xFE8A, 0xFE8B, 0xFE8C},
	0x0627: {0xFE8D, 0xFE8E},
	0x0628: {0xFE8F, 0xFE90, 0xFE91, 0xFE92},
	0x0629: {0xFE93, 0xFE94},
	0x062A: {0xFE95, 0xFE96, 0xFE97, 0xFE98},
	0x062B: {0xFE99, 0xFE9A, 0xFE9B, 0xFE9C},
	0x062C: {0xFE9D, 0xFE9E, 0xFE9F, 0xFEA0},
	0x062D: {0xFEA1, 0xFEA2, 0xFEA3, 0xFEA4},
	0x062E: {0xFEA5, 0xFEA6, 0xFEA7, 0xFEA8},
	0x062F: {0xFEA9, 0xFEAA},
	0x0630: {0xFEAB, 0xFEAC},
	0x0631: {0xFEAD, 0xFEAE},
	0x0632: {0xFEAF, 0xFEB0},
	0x0633: {0xFEB1, 0xFEB2, 0xFEB3, 0xFEB4},
	0x0634: {0xFEB5, 0xFEB6, 0xFEB7, 0xFEB8},
	0x0635: {0xFEB9, 0xFEBA, 0xFEBB, 0xFEBC},
	0x0636: {0xFEBD, 0xFEBE, 0xFEBF, 0xFEC0},
	0x0637: {0xFEC1, 0xFEC2, 0xFEC3, 0xFEC4},
	0x0638: {0xFEC5, 0xFEC6, 0xFEC7, 0xFEC8},
	0x0639: {0xFEC9, 0xFECA, 0xFECB, 0xFECC},
	0x063A: {0xFECD, 0xFECE, 0xFECF, 0xFED0},
	0x0641: {0xFED1, 0xFED2, 0xFED3, 0xFED4},
	0x0642: {0xFED5, 0xFED6, 0xFED7, 0xFED8},
	0x0643: {0xFED9, 0xFEDA, 0xFEDB, 0xFEDC},
	0x0644: {0xFEDD, 0xFEDE, 0xFEDF, 0xFEE0},
	0x0645: {0xFEE1, 0xFEE2, 0xFEE3, 0xFEE4},
	0x0646: {0xFEE5, 0xFEE6, 0xFEE7, 0xFEE8},
	0x0647: {0xFEE9, 0xFEEA, 0xFEEB, 0xFEEC},
	0x0648: {0xFEED, 0xFEEE},
	0x0649: {0xFEEF, 0xFEF0},
	0x064A: {0xFEF1, 0xFEF2, 0xFEF3, 0xFEF4},
}

// lamAlef are the ligatures of lam with each alef: isolated, final.
var lamAlef = map[rune][2]rune{
	0x0622: {0xFEF5, 0xFEF6},
	0x0623: {0xFEF7, 0xFEF8},
	0x0625: {0xFEF9, 0xFEFA},
	0x0627: {0xFEFB, 0xFEFC},
}

const (
	lam     = 0x0644
	tatweel = 0x0640
)

// transparent reports whether r (an Arabic mark, such as a vowel sign)
// is skipped when deciding how its neighbours join.
func transparent(r rune) bool {
	return unicode.Is(unicode.Mn, r)
}

// joinsNext reports whether r connects to the letter after it: it has
// initial and medial forms, and the font draws them whole (where it
// cannot, the letter ends its word visually and stays legible).
func joinsNext(r rune) bool {
	if r == tatweel {
		return true
	}
	f := arabicForms[r]
	return len(f) == 4 && !brokenRunes()[f[2]] && !brokenRunes()[f[3]]
}

// joinsPrev reports whether r connects to the letter before it.
func joinsPrev(r rune) bool {
	return r == tatweel || len(arabicForms[r]) >= 2
}

// decompose splits a letter whose glyph the PDF cannot draw whole into
// its canonical decomposition (alef with hamza above becomes alef and the
// hamza mark), when the parts can be drawn.
func decompose(in []rune) []rune {
	out := make([]rune, 0, len(in))
	for _, r := range in {
		if parts, ok := hamzaCarriers[r]; ok && brokenRunes()[r] {
			out = append(out, parts[0], parts[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// hamzaCarriers are the canonical decompositions of the letters that
// carry a hamza or a madda.
var hamzaCarriers = map[rune][2]rune{
	0x0622: {0x0627, 0x0653},
	0x0623: {0x0627, 0x0654},
	0x0624: {0x0648, 0x0654},
	0x0625: {0x0627, 0x0655},
	0x0626: {0x064A, 0x0654},
}

// shapeArabic replaces Arabic letters by their contextual forms, in
// logical order.
func shapeArabic(in []rune) []rune {
	in = decompose(in)
	out := make([]rune, 0, len(in))
	// prev and next skip transparent marks.
	prev := func(i int) rune {
		for i--; i >= 0; i-- {
			if !transparent(in[i]) {
				return in[i]
			}
		}
		return 0
	}
	next := func(i int) (rune, int) {
		for i++; i < len(in); i++ {
			if !transparent(in[i]) {
				return in[i], i
			}
		}
		return 0, -1
	}
	for i := 0; i < len(in); i++ {
		r := in[i]
		forms, ok := arabicForms[r]
		if !ok {
			out = append(out, r)
			continue
		}
		joinBefore := joinsNext(prev(i)) && joinsPrev(r)
		n, ni := next(i)
		if r == lam {
			if lig, ok := lamAlef[n]; ok && !brokenRunes()[lig[0]] && !brokenRunes()[lig[1]] {
				form := lig[0]
				if joinBefore {
					form = lig[1]
				}
				out = append(out, form)
				out = append(out, in[i+1:ni]...) // marks between lam and alef
				i = ni
				continue
			}
		}
		joinAfter := joinsNext(r) && joinsPrev(n)
		switch {
		case joinBefore && joinAfter:
			out = append(out, forms[3])
		case joinAfter:
			out = append(out, forms[2])
		case joinBefore:
			out = append(out, forms[1])
		default:
			out = append(out, forms[0])
		}
	}
	return out
}

// rtl reports whether r is a strong right-to-left letter (Hebrew, Arabic
// and their presentation forms).
func rtl(r rune) bool {
	return unicode.In(r, unicode.Hebrew, unicode.Arabic) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) && unicode.IsLetter(r)
}

// ltr reports whether r is a strong left-to-right character (a letter of
// another script, or a digit: numbers read left to right in both).
func ltr(r rune) bool {
	return (unicode.IsLetter(r) && !rtl(r)) || unicode.IsDigit(r)
}

// visualOrder returns s as the PDF must draw it, left to right.
func visualOrder(s string) string {
	in := []rune(s)
	hasRTL := false
	for _, r := range in {
		if rtl(r) {
			hasRTL = true
			break
		}
	}
	if !hasRTL {
		return s
	}
	in = shapeArabic(in)
	// The paragraph direction is that of the first strong character.
	base := true // right to left
	for _, r := range in {
		if rtl(r) {
			break
		}
		if ltr(r) {
			base = false
			break
		}
	}
	// Each rune's direction: strong ones their own; marks follow the
	// rune before; neutrals take the direction of the strong runes on both
	// sides when they agree, else the paragraph's.
	dir := make([]int, len(in)) // 1 rtl, -1 ltr, 0 undecided
	for i, r := range in {
		switch {
		case rtl(r):
			dir[i] = 1
		case ltr(r):
			dir[i] = -1
		case unicode.Is(unicode.Mn, r) && i > 0:
			dir[i] = dir[i-1]
		}
	}
	baseDir := -1
	if base {
		baseDir = 1
	}
	for i := 0; i < len(in); {
		if dir[i] != 0 {
			i++
			continue
		}
		j := i
		for j < len(in) && dir[j] == 0 {
			j++
		}
		before, after := baseDir, baseDir
		if i > 0 {
			before = dir[i-1]
		}
		if j < len(in) {
			after = dir[j]
		}
		d := baseDir
		if before == after {
			d = before
		}
		for k := i; k < j; k++ {
			dir[k] = d
		}
		i = j
	}
	// Runs of one direction, in logical order.
	type run struct {
		rs  []rune
		rtl bool
	}
	var runs []run
	for i, r := range in {
		isRTL := dir[i] == 1
		if isRTL {
			r = mirror(r)
		}
		if len(runs) == 0 || runs[len(runs)-1].rtl != isRTL {
			runs = append(runs, run{rtl: isRTL})
		}
		runs[len(runs)-1].rs = append(runs[len(runs)-1].rs, r)
	}
	for _, ru := range runs {
		if ru.rtl {
			reverse(ru.rs)
		}
	}
	if base {
		for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
			runs[i], runs[j] = runs[j], runs[i]
		}
	}
	var out []rune
	for _, ru := range runs {
		out = append(out, ru.rs...)
	}
	return string(out)
}

// reverse reverses a right-to-left run in place. A combining mark ends up
// before (left of) its letter: DejaVu Sans draws Arabic marks to the right
// of the pen, so a mark drawn just before its letter sits over it.
func reverse(rs []rune) {
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
}

// mirror swaps paired punctuation drawn in a right-to-left run.
func mirror(r rune) rune {
	switch r {
	case '(':
		return ')'
	case ')':
		return '('
	case '[':
		return ']'
	case ']':
		return '['
	}
	return r
}
