package kvref_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/kvref/kvref"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/stepper"
)

// Generate from the built-in model (stories260K, embedded in kvref): greedy, 24 tokens.
func Example() {
	m, err := kvref.Open("", kvref.Options{Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	r, err := m.Generate("Once upon a time", kvref.Params{MaxTokens: 24})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", r.Text)
	fmt.Println(r.PromptTokens, "prompt tokens,", len(r.Tokens[0]), "generated, stopped by", r.StopReasons[0])
	// Output:
	// ", there was a little girl named Lily. She loved to play outside in the p"
	// 5 prompt tokens, 24 generated, stopped by length
}

// Stream the text as it is generated: each piece is whole characters that no stop
// string can take back.
func ExampleModel_Stream() {
	m, err := kvref.Open("", kvref.Options{Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	var pieces []string
	for piece, err := range m.Stream("Once upon a time", kvref.Params{MaxTokens: 40, Stop: []string{"."}}) {
		if err != nil {
			log.Fatal(err)
		}
		pieces = append(pieces, piece)
	}
	fmt.Printf("%d pieces: %q\n", len(pieces), strings.Join(pieces, ""))
	// Output:
	// 10 pieces: ", there was a little girl named Lily"
}

// Two prompts sharing a prefix: the second reuses the full cache blocks the first left
// behind instead of computing them again.
func ExampleResult_reusedTokens() {
	m, err := kvref.Open("", kvref.Options{BlockSize: 4, Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	hits := 0
	stop := m.Watch(func(e kvcache.Event) {
		if e.Kind == kvcache.PrefixHit {
			hits++
		}
	})
	defer stop()
	for _, prompt := range []string{"Once upon a time, there was a girl", "Once upon a time, there was a dog"} {
		r, err := m.Generate(prompt, kvref.Params{MaxTokens: 8})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d prompt tokens, %d reused from the cache\n", r.PromptTokens, r.ReusedTokens)
	}
	st := m.Cache().Stats
	fmt.Printf("%d blocks shared by prefix hits; %d prompt tokens reused in all; %d blocks cached\n", hits, st.PrefixHitTokens, st.BlocksCached)
	// Output:
	// 12 prompt tokens, 0 reused from the cache
	// 11 prompt tokens, 8 reused from the cache
	// 2 blocks shared by prefix hits; 8 prompt tokens reused in all; 6 blocks cached
}

// A checked run: every step's logits are recomputed without the cache and must be
// bit-identical before a token is given out.
func ExampleOptions_check() {
	m, err := kvref.Open("", kvref.Options{Check: true, CacheType: "f16", Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	r, err := m.Generate("Once upon a time", kvref.Params{MaxTokens: 16, Temperature: 0.8, Seed: 42})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", r.Text)
	fmt.Printf("%d of %d tokens checked bit for bit (cache %s)\n", r.CheckedTokens, len(r.Tokens[0]), m.CacheConfig().KType)
	// Output:
	// ", there was a little boy named Timmy. Timmy loved to play"
	// 16 of 16 tokens checked bit for bit (cache f16)
}

// A stepping session: a prompt, a fork that shares its blocks, and the fork's first token,
// which copies the shared partial block before writing into it (copy-on-write).
func ExampleModel_NewStepper() {
	m, err := kvref.Open("", kvref.Options{BlockSize: 4, CacheBlocks: 8, Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewStepper(kvref.Params{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	add, err := s.Do(stepper.Command{Op: "add", Text: "Once upon a time"})
	if err != nil {
		log.Fatal(err)
	}
	parent := add.Seq
	fmt.Println("seq", parent.ID(), "table", parent.KV.Table(), "tokens", parent.KV.Len())
	fork, err := s.Do(stepper.Command{Op: "fork", Seq: parent.ID()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("seq", fork.Seq.ID(), "table", fork.Seq.KV.Table(), "shared")
	dec, err := s.Do(stepper.Command{Op: "decode", Seq: fork.Seq.ID()})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range dec.Decoded[0].Cache.Copies {
		fmt.Printf("copy-on-write: shared block %d copied into block %d (filled slots: %d), then written\n", c.From, c.Block, c.Slots)
	}
	fmt.Println("seq", fork.Seq.ID(), "table", fork.Seq.KV.Table(), "; seq", parent.ID(), "table", parent.KV.Table())
	fmt.Println(s.Engine().Pool().Stats().CowCopies, "copy-on-write in the pool's statistics")
	// Output:
	// seq 0 table [0 1] tokens 5
	// seq 1 table [0 1] shared
	// copy-on-write: shared block 1 copied into block 2 (filled slots: 1), then written
	// seq 1 table [0 2] ; seq 0 table [0 1]
	// 1 copy-on-write in the pool's statistics
}
