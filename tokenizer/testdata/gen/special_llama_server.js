// Writes OUT/llama-server-special.jsonl: the token ids llama.cpp gives for
// text with special tokens, from llama-server's /tokenize endpoint (which
// parses special tokens, as llama-server does for text prompts); and
// OUT/llama-server-eog.jsonl: the end-of-turn and end-of-generation ids
// llama.cpp's vocabulary loader chose, from the lines "EOT token = ID" and
// "EOG token = ID" of its log. See ../special/README.md.
//
//   node special_llama_server.js FIXTURES LLAMA_SERVER ../special
//
// FIXTURES is the directory TestWriteSpecialFixtures wrote (inputs.json and
// gguf/NAME.gguf: tiny models carrying each vocabulary, since llama-server
// needs weights); LLAMA_SERVER is ../shared/bin/llama-server. Each line of
// the first file: {"tokenizer", "input", "ids", "ids_with_special"}, with
// add_special false and true; of the second: {"tokenizer", "eot", "eog"}.
// Only the loopback address is used.
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const names = ['stories260K', 'llama-spm', 'phi-3', 'gpt-2', 'eog-text', 'eog-keys'];

async function waitHealthy(base, child) {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}`);
    try {
      const r = await fetch(base + '/health');
      if (r.ok) return;
    } catch (e) { /* not listening yet */ }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('llama-server did not become healthy in 60 s');
}

async function tokenize(base, content, addSpecial) {
  const r = await fetch(base + '/tokenize', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ content, add_special: addSpecial, parse_special: true }),
  });
  if (!r.ok) throw new Error(`/tokenize: ${r.status} ${await r.text()}`);
  return (await r.json()).tokens;
}

(async () => {
  const [dir, server, out] = process.argv.slice(2);
  const inputs = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
  const vectors = [];
  const eogs = [];
  for (const [i, name] of names.entries()) {
    const port = 18461 + i;
    const base = `http://127.0.0.1:${port}`;
    const child = spawn(server, ['-m', path.join(dir, 'gguf', name + '.gguf'), '--host', '127.0.0.1',
      '--port', String(port), '-c', '256', '-t', '1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => { log += d; });
    try {
      await waitHealthy(base, child);
      for (const input of inputs) {
        const ids = await tokenize(base, input, false);
        const withSpecial = await tokenize(base, input, true);
        vectors.push(JSON.stringify({ tokenizer: name, input, ids, ids_with_special: withSpecial }));
      }
      const eot = [...log.matchAll(/EOT token\s*=\s*(\d+)/g)].map((m) => Number(m[1]));
      const eog = [...log.matchAll(/EOG token\s*=\s*(\d+)/g)].map((m) => Number(m[1]));
      if (eog.length === 0) throw new Error('no "EOG token" lines in the log of llama-server');
      eogs.push(JSON.stringify({ tokenizer: name, eot: eot.length ? eot[0] : -1, eog: eog.sort((a, b) => a - b) }));
    } catch (e) {
      console.error(log);
      throw e;
    } finally {
      child.kill('SIGTERM');
      await new Promise((res) => (child.exitCode !== null ? res() : child.on('exit', res)));
    }
  }
  fs.writeFileSync(path.join(out, 'llama-server-special.jsonl'), vectors.join('\n') + '\n');
  fs.writeFileSync(path.join(out, 'llama-server-eog.jsonl'), eogs.join('\n') + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
