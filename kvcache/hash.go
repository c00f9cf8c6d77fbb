package kvcache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Hash identifies the contents of a full block: SHA-256 of the parent block's hash and the
// block's token ids. The chain starts from a root hash of everything else that changes K/V
// (the model identity, the cache storage types and the block size), so a hit means
// "same model, same storage, same tokens at the same positions". Hits are additionally
// confirmed by comparing the stored token ids, so even a hash collision cannot share a
// wrong block.
type Hash [sha256.Size]byte

// String returns the first 12 hex digits, enough to tell blocks apart on screen.
func (h Hash) String() string { return hex.EncodeToString(h[:6]) }

func rootHash(cfg Config) Hash {
	hw := sha256.New()
	hw.Write([]byte("kvref block chain v1\x00"))
	hw.Write([]byte(cfg.ModelID))
	hw.Write([]byte{0})
	hw.Write([]byte(cfg.KType.String() + "/" + cfg.VType.String()))
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(cfg.BlockSize))
	hw.Write(buf[:])
	var h Hash
	hw.Sum(h[:0])
	return h
}

// chainHash is the hash of a block holding tokens whose predecessor has hash parent.
func chainHash(parent Hash, tokens []int) Hash {
	hw := sha256.New()
	hw.Write(parent[:])
	buf := make([]byte, 4*len(tokens))
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(buf[4*i:], uint32(int32(t)))
	}
	hw.Write(buf)
	var h Hash
	hw.Sum(h[:0])
	return h
}

func sameTokens(stored []int32, tokens []int) bool {
	if len(stored) != len(tokens) {
		return false
	}
	for i, t := range tokens {
		if stored[i] != int32(t) {
			return false
		}
	}
	return true
}
