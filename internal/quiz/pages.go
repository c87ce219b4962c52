package quiz

// PageOf is the page (0-based) slot (1-based) is on when perPage
// questions are shown at a time; perPage 0 puts every slot on page 0.
func PageOf(slot, perPage int) int {
	if perPage <= 0 || slot < 1 {
		return 0
	}
	return (slot - 1) / perPage
}

// PageCount is how many pages n slots take at perPage a page (at least 1).
func PageCount(n, perPage int) int {
	if perPage <= 0 || n <= perPage {
		return 1
	}
	return (n + perPage - 1) / perPage
}

// Sequential reports whether the settings make a learner go through the
// pages in order with no way back: sequential navigation with more than
// one page.
func (s Settings) Sequential(slots int) bool {
	return s.Navigation == NavSequential && PageCount(slots, s.PerPage) > 1
}

// SlotOnPage reports whether a learner on page may change slot. With
// free navigation every slot may change; with sequential navigation only
// the slots of the learner's current page (those before it were left for
// good, those after it are not shown yet).
func (s Settings) SlotOnPage(slot, slots, page int) bool {
	return !s.Sequential(slots) || PageOf(slot, s.PerPage) == page
}
