package lms

// Flag is b as the 0/1 integer that yes/no fields are in both APIs' answers
// and in both databases' columns.
func Flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
