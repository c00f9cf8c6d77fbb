package tokenizer

import (
	"slices"
	"sort"
)

// llama.cpp's pre-tokenizer regexes (llm_tokenizer_bpe in
// src/llama-vocab.cpp), by tokenizer.ggml.pre name. Each regex splits every
// piece the previous ones left, keeping matches and the text between them
// as pieces of their own.
var (
	// preGPT2 is GPT-2's regex. llama.cpp lists it without the final `|\s+`,
	// but its hand-written splitter implements that alternative too; and
	// with Isolated splitting the text between matches is kept anyway.
	preGPT2 = []string{gpt2Pattern}

	// preLlama3 is Llama 3's (tiktoken cl100k) regex, with llama.cpp's
	// ASCII-only spelling of the case-insensitive contractions.
	preLlama3 = []string{
		`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}

	// preQwen2 is Llama 3's regex with single digits.
	preQwen2 = []string{
		`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}

	// preStarCoder is GPT-2's regex after splitting off every digit.
	preStarCoder = []string{`\p{N}`, gpt2Pattern}

	// preDefault is what llama.cpp uses for "default" (and for a missing
	// tokenizer.ggml.pre).
	preDefault = []string{
		`[\p{P}\$\+<=>\^~\|]+`,
		gpt2Pattern,
		`\p{N}+`,
		`[0-9][0-9][0-9]`,
	}

	// preFalcon is Falcon's.
	preFalcon = []string{
		"[\\p{P}\\$\\+<=>\\^~\\|`]+",
		gpt2Pattern,
		`[0-9][0-9][0-9]`,
	}

	// preDeepSeekLLM is DeepSeek LLM's. Its letter class is the cased
	// letters; the characters that Unicode normalization would change
	// (Greek oxia forms, the Ohm and Kelvin signs) are written as escapes.
	preDeepSeekLLM = []string{
		"[\r\n]",
		`\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+`,
		`\s?[!-/:-~！-／：-～‘-‟　-。]+`,
		`\s+$`,
		`[一-龥ࠀ-一가-퟿]+`,
		`\p{N}+`,
	}

	// preDeepSeekCoder is DeepSeek Coder's.
	preDeepSeekCoder = []string{
		"[\r\n]",
		`\s?\p{L}+`,
		`\s?\p{P}+`,
		`[一-龥ࠀ-一가-퟿]+`,
		`\p{N}`,
	}

	// preBloom is BLOOM's (also Poro and GPT-3 Finnish).
	preBloom = []string{` ?[^(\s|.,!?…。，、।۔،)]+`}

	// preViking is Viking's.
	preViking = []string{` ?[^(\s|.,!?…。，、।۔،)]+`, `\p{N}`}

	// preTekken is Mistral's Tekken regex, in llama.cpp's adaptation.
	preTekken = []string{
		`[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}

	// preGPT4o is GPT-4o's (o200k) regex, in llama.cpp's adaptation.
	preGPT4o = []string{
		`[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}

	// preSeedCoder is Seed-Coder's.
	preSeedCoder = []string{
		`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}
)

// preType is what a tokenizer.ggml.pre name selects in llama.cpp.
type preType struct {
	regexes      []string
	ignoreMerges bool // a word that is a whole token skips BPE (Llama 3)
	addBOS       bool // default for tokenizer.ggml.add_bos_token
	noBOS        bool // the BOS id is dropped (ChatGLM)
}

// preTypes maps tokenizer.ggml.pre names to their pre-tokenizers, as
// llama.cpp's llama_vocab::impl::load does.
var preTypes = map[string]preType{}

func init() {
	add := func(p preType, names ...string) {
		for _, n := range names {
			preTypes[n] = p
		}
	}
	add(preType{regexes: preDefault}, "default")
	add(preType{regexes: preLlama3, ignoreMerges: true, addBOS: true},
		"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2")
	add(preType{regexes: preLlama3}, "dbrx", "smaug-bpe")
	add(preType{regexes: preLlama3, noBOS: true}, "chatglm-bpe", "glm4")
	add(preType{regexes: preDeepSeekLLM}, "deepseek-llm")
	add(preType{regexes: preDeepSeekCoder}, "deepseek-coder")
	add(preType{regexes: preFalcon}, "falcon")
	add(preType{regexes: preGPT2},
		"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
		"mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4")
	add(preType{regexes: preStarCoder},
		"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2")
	add(preType{regexes: preQwen2},
		"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open")
	add(preType{regexes: preBloom}, "poro-chat", "bloom", "gpt3-finnish")
	add(preType{regexes: preViking}, "viking")
	add(preType{regexes: preTekken, ignoreMerges: true, addBOS: true}, "tekken")
	add(preType{regexes: preGPT4o}, "gpt-4o", "llama4")
	add(preType{regexes: preSeedCoder}, "seed-coder")
}

// lookupPreType returns the pre-tokenizer named name (tokenizer.ggml.pre; empty means
// "default"), the name it goes by, and whether kvref has it.
func lookupPreType(name string) (preType, string, bool) {
	if name == "" {
		name = "default"
	}
	p, ok := preTypes[name]
	return p, name, ok
}

// preTypeNames returns the supported tokenizer.ggml.pre names, sorted.
func preTypeNames() []string {
	names := make([]string, 0, len(preTypes))
	for n := range preTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return slices.Compact(names)
}
