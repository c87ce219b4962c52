package quiz

import "testing"

func TestPages(t *testing.T) {
	tests := []struct {
		slot, perPage, page int
	}{
		{1, 0, 0}, {9, 0, 0}, {1, 1, 0}, {2, 1, 1}, {3, 2, 1}, {4, 2, 1}, {5, 2, 2}, {0, 2, 0},
	}
	for _, tc := range tests {
		if got := PageOf(tc.slot, tc.perPage); got != tc.page {
			t.Errorf("PageOf(%d, %d) = %d, want %d", tc.slot, tc.perPage, got, tc.page)
		}
	}
	for _, tc := range []struct{ n, per, want int }{{0, 0, 1}, {5, 0, 1}, {3, 3, 1}, {4, 3, 2}, {6, 3, 2}, {7, 3, 3}} {
		if got := PageCount(tc.n, tc.per); got != tc.want {
			t.Errorf("PageCount(%d, %d) = %d, want %d", tc.n, tc.per, got, tc.want)
		}
	}
}

func TestSlotOnPage(t *testing.T) {
	seq := Settings{Navigation: NavSequential, PerPage: 2}
	free := Settings{Navigation: NavFree, PerPage: 2}
	onePage := Settings{Navigation: NavSequential, PerPage: 0}
	tests := []struct {
		name              string
		s                 Settings
		slot, slots, page int
		want              bool
	}{
		{"sequential, current page", seq, 3, 6, 1, true},
		{"sequential, current page second slot", seq, 4, 6, 1, true},
		{"sequential, a page left", seq, 2, 6, 1, false},
		{"sequential, a page ahead", seq, 5, 6, 1, false},
		{"free, a page left", free, 1, 6, 2, true},
		{"free, a page ahead", free, 6, 6, 0, true},
		{"sequential on one page", onePage, 6, 6, 0, true},
		{"sequential, all fit on one page", seq, 2, 2, 0, true},
	}
	for _, tc := range tests {
		if got := tc.s.SlotOnPage(tc.slot, tc.slots, tc.page); got != tc.want {
			t.Errorf("%s: SlotOnPage(%d, %d, %d) = %v, want %v", tc.name, tc.slot, tc.slots, tc.page, got, tc.want)
		}
	}
}
