package tokenizer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
)

// kv is one metadata entry for makeGGUF.
type kv struct {
	key string
	val any // string, uint32, int32, bool, float32, []string, []float32, []int32
}

// makeGGUF encodes a metadata-only GGUF v3 file and parses it.
func makeGGUF(t *testing.T, kvs []kv) *gguf.File {
	t.Helper()
	var b bytes.Buffer
	w := func(x any) { require.NoError(t, binary.Write(&b, binary.LittleEndian, x)) }
	str := func(s string) { w(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	w(uint32(3))
	w(uint64(0))
	w(uint64(len(kvs)))
	for _, e := range kvs {
		str(e.key)
		switch x := e.val.(type) {
		case string:
			w(uint32(8))
			str(x)
		case uint32:
			w(uint32(4))
			w(x)
		case int32:
			w(uint32(5))
			w(x)
		case float32:
			w(uint32(6))
			w(x)
		case bool:
			w(uint32(7))
			w(x)
		case []string:
			w(uint32(9))
			w(uint32(8))
			w(uint64(len(x)))
			for _, s := range x {
				str(s)
			}
		case []float32:
			w(uint32(9))
			w(uint32(6))
			w(uint64(len(x)))
			w(x)
		case []int32:
			w(uint32(9))
			w(uint32(5))
			w(uint64(len(x)))
			w(x)
		default:
			require.FailNowf(t, "makeGGUF: unsupported value", "%T", x)
		}
	}
	for b.Len()%32 != 0 {
		b.WriteByte(0)
	}
	f, err := gguf.Parse("test.gguf", b.Bytes())
	require.NoError(t, err)
	return f
}

// vocabKVs returns the metadata of the hand-built test vocabulary, with
// only the keys FromGGUF requires.
func vocabKVs() []kv {
	v := testVocab(vocabOpts{})
	return []kv{
		{keyModel, "llama"},
		{keyTokens, v.Tokens},
		{keyScores, v.Scores},
		{keyTypes, v.Types},
	}
}

// with returns kvs with key set to val (replacing or appending); a nil val
// removes the key.
func with(kvs []kv, key string, val any) []kv {
	out := []kv{}
	found := false
	for _, e := range kvs {
		if e.key == key {
			found = true
			if val == nil {
				continue
			}
			e.val = val
		}
		out = append(out, e)
	}
	if !found && val != nil {
		out = append(out, kv{key, val})
	}
	return out
}

func fromKVs(t *testing.T, kvs []kv) (*SPM, error) {
	t.Helper()
	tok, err := FromGGUF(makeGGUF(t, kvs))
	if err != nil {
		require.Nil(t, tok, "FromGGUF returns a nil Tokenizer with an error")
		return nil, err
	}
	return tok.(*SPM), nil
}

func TestFromGGUFDefaults(t *testing.T) {
	t.Parallel()

	s, err := fromKVs(t, vocabKVs())
	require.NoError(t, err)
	require.Equal(t, 1, s.BOS())
	require.Equal(t, 2, s.EOS())
	require.Equal(t, 0, s.UNK())
	require.Equal(t, -1, s.PAD())
	require.True(t, s.AddBOS(), "add_bos_token defaults to true")
	require.False(t, s.AddEOS(), "add_eos_token defaults to false")
	require.True(t, s.addSpacePrefix, "add_space_prefix defaults to true")
	require.Equal(t, []string{"<s>", "▁hello"}, texts(s, s.Encode("hello", true)))
	require.True(t, s.IsEOG(2))
}

func TestFromGGUFKeys(t *testing.T) {
	t.Parallel()

	kvs := vocabKVs()
	kvs = with(kvs, keyBOS, uint32(2))
	kvs = with(kvs, keyEOS, uint32(1))
	kvs = with(kvs, keyUNK, uint32(0xFFFFFFFF)) // "none" in many files: default kept
	kvs = with(kvs, keyPAD, int32(-1))
	kvs = with(kvs, keyAddBOS, false)
	kvs = with(kvs, keyAddEOS, true)
	kvs = with(kvs, keyAddSpacePrefix, false)
	s, err := fromKVs(t, kvs)
	require.NoError(t, err)
	require.Equal(t, 2, s.BOS())
	require.Equal(t, 1, s.EOS())
	require.Equal(t, 0, s.UNK())
	require.Equal(t, -1, s.PAD())
	require.False(t, s.AddBOS())
	require.True(t, s.AddEOS())
	require.Equal(t, []string{"hello", "<s>"}, texts(s, s.Encode("hello", true)))
}

func TestFromGGUFEOG(t *testing.T) {
	t.Parallel()

	kvs := vocabKVs()
	toks := kvs[1].val.([]string)
	toks = append(toks, "<|endoftext|>", "<|eom_id|>", "<|fim_pad|>")
	n := len(toks)
	kvs = with(kvs, keyTokens, toks)
	kvs = with(kvs, keyScores, append(kvs[2].val.([]float32), 0, 0, 0))
	kvs = with(kvs, keyTypes, append(kvs[3].val.([]int32), TypeNormal, TypeNormal, TypeNormal))
	s, err := fromKVs(t, kvs)
	require.NoError(t, err)
	end := ids(t, s, "<|end|>")[0]
	for _, id := range []int{2, end, n - 3, n - 2, n - 1} {
		require.True(t, s.IsEOG(id), "%d %q", id, s.TokenText(id))
	}
	require.Equal(t, end, s.eot, "the lowest matching id becomes EOT")
	// Tokens recognised by their text become control tokens, as in llama.cpp.
	require.Equal(t, TypeControl, s.TokenType(n-3))
	require.Nil(t, s.Piece(n-3))

	kvs = with(kvs, keyEOT, uint32(n-3))
	s, err = fromKVs(t, kvs)
	require.NoError(t, err)
	require.Equal(t, n-3, s.eot, "an explicit eot_token_id wins")
}

func TestFromGGUFPhi3RStrip(t *testing.T) {
	t.Parallel()

	kvs := with(vocabKVs(), keyName, "Phi3")
	s, err := fromKVs(t, kvs)
	require.NoError(t, err)
	require.Equal(t, []string{"▁a", "<sep>", "▁", "b"}, texts(s, s.Encode("a<sep> b", false)))
	require.False(t, s.rstrip[tBOS])
	require.True(t, s.rstrip[tEOS])
}

func TestFromGGUFErrors(t *testing.T) {
	t.Parallel()

	base := vocabKVs()
	n := len(base[1].val.([]string))
	tests := []struct {
		name string
		kvs  []kv
		want []string // substrings of the error
	}{
		{"unsupported model", with(base, keyModel, "bert"), []string{`"bert"`, keyModel, `supported: "llama"`}},
		{"missing model", with(base, keyModel, nil), []string{keyModel, "missing"}},
		{"model not a string", with(base, keyModel, uint32(1)), []string{keyModel}},
		{"missing tokens", with(base, keyTokens, nil), []string{keyTokens, "missing"}},
		{"missing scores", with(base, keyScores, nil), []string{keyScores, "missing"}},
		{"missing token types", with(base, keyTypes, nil), []string{keyTypes, "missing"}},
		{"scores too short", with(base, keyScores, make([]float32, n-1)), []string{keyScores, fmt.Sprintf("has %d entries, want %d", n-1, n)}},
		{"types too long", with(base, keyTypes, make([]int32, n+2)), []string{keyTypes, fmt.Sprintf("has %d entries, want %d", n+2, n)}},
		{"bool of wrong type", with(base, keyAddBOS, uint32(1)), []string{keyAddBOS}},
		{"id of wrong type", with(base, keyBOS, "one"), []string{keyBOS, "integer"}},
		{"invalid vocabulary", with(base, keyTypes, append(make([]int32, n-1), 42)), []string{"unknown type 42", "test.gguf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fromKVs(t, tt.kvs)
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}
