//go:build !linux

package pages

import "errors"

// Populate does nothing here and reports false: the pages fault in on their first writes.
func Populate([]byte) bool { return false }

// Resident is not available here.
func Resident([]byte) (resident, total int, err error) {
	return 0, 0, errors.New("pages: Resident needs Linux's mincore")
}
