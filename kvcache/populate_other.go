//go:build !linux

package kvcache

// populate does nothing here: the pages of the pool fault in on their first writes.
func populate([]byte) {}
