// Regenerates ../hf-synth.jsonl with Hugging Face's tokenizers library (npm
// tokenizers@0.23.2, pinned in package-lock.json beside this file, the
// version that produced ../shared/tokenizer/hf's vectors-public.jsonl):
//
//   (cd tokenizer/testdata/gen && npm ci)
//   KVREF_WRITE_SYNTH=/tmp/synth KVREF_WRITE_INPUTS=/tmp/synth/inputs.json \
//     go test ./tokenizer/ -run 'TestWriteSynthTokenizers|TestWriteVectorInputs'
//   node tokenizer/testdata/gen/gen_vectors.js /tmp/synth ../shared/tokenizer/hf > tokenizer/testdata/hf-synth.jsonl
//
// Each encode line: {"tokenizer", "input", "ids", "ids_with_special",
// "decoded", "roundtrip", "decoded_special"} where ids/ids_with_special are
// encode(input, addSpecialTokens false/true) (special tokens in the text are
// parsed, the library's default), decoded = decode(ids, false) and
// decoded_special = decode(ids_with_special, true). Each decode line:
// {"tokenizer", "decode_ids", "text", "text_skip"} = decode(ids, false/true).
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const path = require('path');

(async () => {
  const [synthDir, sharedDir] = process.argv.slice(2);
  const inputs = JSON.parse(fs.readFileSync(path.join(synthDir, 'inputs.json'), 'utf8'));
  const names = ['gpt2', 'smollm', 'llama3-style', 'qwen2-style', 'gpt2-added', 'gpt2-splits', 'llama2-style', 'metaspace-style'];
  for (const name of names) {
    const dir = fs.existsSync(path.join(synthDir, name)) ? synthDir : sharedDir;
    const tok = Tokenizer.fromFile(path.join(dir, name, 'tokenizer.json'));
    const size = tok.getVocabSize(true);
    const decodes = [];
    for (const input of inputs) {
      const a = await tok.encode(input, null, { addSpecialTokens: false });
      const b = await tok.encode(input, null, { addSpecialTokens: true });
      const ids = Array.from(a.getIds());
      const withSpecial = Array.from(b.getIds());
      const decoded = await tok.decode(ids, false);
      console.log(JSON.stringify({ tokenizer: name, input, ids, ids_with_special: withSpecial, decoded,
        roundtrip: decoded === input, decoded_special: await tok.decode(withSpecial, true) }));
      if (withSpecial.length > 2) {
        decodes.push(withSpecial.filter((_, i) => i % 3 !== 1)); // breaks UTF-8 sequences
        decodes.push(withSpecial.slice(1));
      }
    }
    decodes.push([size - 1, 0, 1, 2, size, size + 5, 3]);
    decodes.push([]);
    for (const ids of decodes) {
      console.log(JSON.stringify({ tokenizer: name, decode_ids: ids, text: await tok.decode(ids, false),
        text_skip: await tok.decode(ids, true) }));
    }
  }
})().catch((e) => { console.error(e); process.exit(1); });
