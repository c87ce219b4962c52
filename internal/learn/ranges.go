package learn

import "sort"

// MaxRanges bounds how many watched ranges one report may carry.
const MaxRanges = 1000

// MergeRanges returns the union of ranges as sorted, disjoint [start, end)
// second ranges. Ranges are clamped to [0, duration] when duration > 0;
// empty and reversed ranges are dropped; touching ranges are joined.
func MergeRanges(duration int, ranges ...[][2]int) [][2]int {
	var all [][2]int
	for _, rs := range ranges {
		for _, r := range rs {
			a, b := r[0], r[1]
			if a < 0 {
				a = 0
			}
			if duration > 0 && b > duration {
				b = duration
			}
			if b > a {
				all = append(all, [2]int{a, b})
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i][0] < all[j][0] })
	out := make([][2]int, 0, len(all))
	for _, r := range all {
		if n := len(out); n > 0 && r[0] <= out[n-1][1] {
			if r[1] > out[n-1][1] {
				out[n-1][1] = r[1]
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// Covered is the number of distinct seconds in ranges within [0,
// duration] (all of them when duration is 0).
func Covered(ranges [][2]int, duration int) int {
	n := 0
	for _, r := range MergeRanges(duration, ranges) {
		n += r[1] - r[0]
	}
	return n
}

// CoveragePercent is the whole percentage (rounded down) of duration that
// ranges cover; 0 when duration is not positive.
func CoveragePercent(ranges [][2]int, duration int) int {
	if duration <= 0 {
		return 0
	}
	return Covered(ranges, duration) * 100 / duration
}

// WatchedEnough reports whether ranges cover at least 90% of the distinct
// seconds of a medium of duration seconds. Where the playhead ends up
// does not matter: seeking to the end covers nothing.
func WatchedEnough(ranges [][2]int, duration int) bool {
	if duration <= 0 {
		return false
	}
	return Covered(ranges, duration)*10 >= duration*9
}
