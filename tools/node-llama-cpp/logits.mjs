// logits.mjs: node-llama-cpp (llama.cpp 0.5.0) as a logits oracle for kvref.
//
//   node logits.mjs --model F.gguf --prompt 1,2,3 [--steps 64] [--threads 1] [--cache f32]
//                   [--ctx 512] [--swa-full]
//
// Evaluates the token-id prompt (no BOS is added: the ids are sent as given), then takes
// --steps greedy steps, each the argmax of the raw logits (lowest id on a tie). Flash
// attention is off and the KV cache is --cache (f32 by default). Prints one JSON line per
// position whose logits were computed: {"step": i, "next": id, "logits": [...]}, where
// step 0 is the logits after the prompt and logits holds the whole vocabulary by id; the
// token fed at step i+1 is step i's "next". A last line {"done": true, "tokens": [...]}
// lists the generated ids. Used by internal/nodellama's tests.
import {loadModel, parseFlags, text} from "./load.mjs";

function parseArgs(argv) {
    const a = parseFlags(argv, {steps: 64, threads: 1, cache: "f32", ctx: 512, swaFull: false}, {
        "--model": ["model", text],
        "--prompt": ["prompt", (v) => v.split(",").filter((s) => s !== "").map(Number)],
        "--steps": ["steps", Number],
        "--threads": ["threads", Number],
        "--cache": ["cache", text],
        "--ctx": ["ctx", Number],
        "--swa-full": ["swaFull", null],
    });
    if (!a.model || !a.prompt || a.prompt.length === 0) throw new Error("--model and --prompt are required");
    if (a.prompt.some((t) => !Number.isInteger(t) || t < 0)) throw new Error(`--prompt: not a list of token ids: ${a.prompt}`);
    return a;
}

const args = parseArgs(process.argv.slice(2));
const {llama, model, context, vocab} = await loadModel(args.model, args.cache, {
    contextSize: args.ctx, batchSize: args.ctx, sequences: 1, threads: args.threads,
    swaFullCache: args.swaFull,
});
const seq = context.getSequence();

// dense returns the logits map as an array indexed by token id.
function dense(map) {
    const out = new Array(vocab).fill(null);
    for (const [id, l] of map) out[id] = l;
    return out;
}

// argmax with the lowest id winning ties, as kvref's greedy choice.
function argmax(arr) {
    let best = 0;
    for (let i = 1; i < arr.length; i++) if (arr[i] > arr[best]) best = i;
    return best;
}

const generated = [];
let input = args.prompt.map((t, i) => (i === args.prompt.length - 1 ? [t, {generateNext: {logits: true}}] : t));
for (let step = 0; step <= args.steps; step++) {
    const res = await seq.controlledEvaluate(input);
    const last = res[input.length - 1];
    if (!last || !last.next || !last.next.logits) throw new Error(`step ${step}: node-llama-cpp returned no logits`);
    const logits = dense(last.next.logits);
    const next = argmax(logits);
    process.stdout.write(JSON.stringify({step, next, logits}) + "\n");
    if (step === args.steps) break;
    generated.push(next);
    input = [[next, {generateNext: {logits: true}}]];
}
process.stdout.write(JSON.stringify({done: true, tokens: generated, vocab}) + "\n");
await context.dispose();
await model.dispose();
await llama.dispose();
