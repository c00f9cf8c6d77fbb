//go:build !linux

package mmapfile

// prefault touches every page of the mapping, so that each is read and mapped now.
func prefault(data []byte) { touchPages(data) }
