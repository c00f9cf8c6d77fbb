// serve.mjs: a small OpenAI-style /v1/completions server on node-llama-cpp 3.22.1
// (llama.cpp 0.5.0), so that `kvref verify --target` can check llama.cpp's newest cache
// (its iSWA cache on Gemma models included). docs/llamacpp-node.md describes it.
//
//   node serve.mjs --model F.gguf [--port 8090] [--host 127.0.0.1] [--sequences 4]
//                  [--ctx 1152] [--threads 1] [--cache f32] [--swa-full]
//
// One llama.cpp context holds --sequences sequences of --ctx tokens each; node-llama-cpp
// batches the sequences that run at the same time into one llama_decode. A request takes
// the idle sequence whose tokens share the longest prefix with its prompt when that covers
// at least half the prompt (as llama-server's --slot-prompt-similarity 0.5), otherwise the
// least recently used idle one, and waits in line when none is idle. Prefix reuse: the
// sequence keeps the tokens it held, the ones after the common prefix are erased
// (node-llama-cpp drops the whole state when the erase reaches below what a sliding
// window still holds), and only the rest of the prompt is evaluated; the last prompt
// token is always evaluated, for its logits.
//
// Requests: prompt as token ids (a string is tokenized), max_tokens, logprobs (top k),
// temperature (0: greedy, the lowest id on ties) or seeded sampling with top_k, top_p and
// min_p (the adapter's own sampler), n (each choice on its own sequence), stop strings
// (the token that completes one is kept), ignore_eos, stream with
// stream_options.include_usage, cache_prompt false (erase the sequence first). The
// response gives log-probabilities in llama-server's shape (logprobs.content: id,
// logprob, top_logprobs), computed from the raw logits in float64, and
// usage.prompt_tokens_details.cached_tokens: the prompt tokens the sequence kept. That
// count is this adapter's own claim, read from node-llama-cpp's nextTokenIndex after the
// erase: llama.cpp itself reports nothing here.
//
// Also: GET /health, GET /v1/models, POST /flush (erase every sequence, when idle).
import http from "node:http";
import path from "node:path";
import {loadModel, parseFlags, text} from "./load.mjs";

function parseArgs(argv) {
    const a = parseFlags(argv, {port: 8090, host: "127.0.0.1", sequences: 4, ctx: 1152, threads: 1, cache: "f32", swaFull: false, batch: 512}, {
        "--model": ["model", text],
        "--port": ["port", Number],
        "--host": ["host", text],
        "--sequences": ["sequences", Number],
        "--ctx": ["ctx", Number],
        "--threads": ["threads", Number],
        "--cache": ["cache", text],
        "--batch": ["batch", Number],
        "--swa-full": ["swaFull", null],
    });
    if (!a.model) throw new Error("--model is required");
    return a;
}

const args = parseArgs(process.argv.slice(2));
const {llama, model, context, vocab} = await loadModel(args.model, args.cache, {
    contextSize: args.ctx, sequences: args.sequences, batchSize: args.batch, threads: args.threads,
    swaFullCache: args.swaFull,
});
const modelName = path.basename(args.model);

// slots: every sequence, whether a request holds it, and when it was last released.
const slots = [];
for (let i = 0; i < args.sequences; i++) slots.push({seq: context.getSequence(), busy: false, used: 0, id: i});
let clock = 0;
const waiting = []; // resolvers of requests waiting for a sequence

function commonPrefix(a, b) {
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
}

// acquire returns an idle slot for the prompt (see the file comment), waiting if needed.
async function acquire(prompt) {
    for (;;) {
        const idle = slots.filter((s) => !s.busy);
        if (idle.length > 0) {
            let best = null, bestN = -1;
            for (const s of idle) {
                const n = commonPrefix(s.seq.contextTokens, prompt);
                if (n > bestN) { best = s; bestN = n; }
            }
            if (bestN < prompt.length / 2) best = idle.reduce((a, b) => (b.used < a.used ? b : a));
            best.busy = true;
            return best;
        }
        await new Promise((resolve) => waiting.push(resolve));
    }
}

function release(slot) {
    slot.busy = false;
    slot.used = ++clock;
    const w = waiting.shift();
    if (w) w();
}

// prepare keeps the longest usable prefix of the slot's tokens and returns how many prompt
// tokens it kept (at most prompt.length − 1).
async function prepare(slot, prompt, cachePrompt) {
    const seq = slot.seq;
    let keep = cachePrompt ? commonPrefix(seq.contextTokens, prompt) : 0;
    keep = Math.min(keep, prompt.length - 1);
    if (keep === 0) await seq.clearHistory();
    else if (seq.nextTokenIndex > keep) await seq.eraseContextTokenRanges([{start: keep, end: seq.nextTokenIndex}]);
    return seq.nextTokenIndex; // what node-llama-cpp kept (0 when a window forced a full erase)
}

// Random numbers for seeded sampling (mulberry32).
function rng(seed) {
    let a = (seed >>> 0) || 1;
    return () => {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

// stepResult turns a logits Map into the chosen token, its log-probability and the top k.
function stepResult(logitsMap, opt, random) {
    const logits = new Float64Array(vocab).fill(-Infinity);
    for (const [id, l] of logitsMap) logits[id] = l;
    let mx = -Infinity, arg = 0;
    for (let i = 0; i < vocab; i++) if (logits[i] > mx) { mx = logits[i]; arg = i; }
    let sum = 0;
    for (let i = 0; i < vocab; i++) sum += Math.exp(logits[i] - mx);
    const lse = mx + Math.log(sum);
    let token = arg;
    if (opt.temperature > 0) token = sample(logits, opt, random);
    const top = [];
    if (opt.logprobs > 0) {
        const ids = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a] || a - b).slice(0, opt.logprobs);
        for (const id of ids) top.push({id, logprob: logits[id] - lse});
    }
    return {id: token, logprob: logits[token] - lse, top_logprobs: top};
}

// sample draws from softmax(logits/T) after top-k, top-p and min-p.
function sample(logits, opt, random) {
    let ids = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a] || a - b);
    if (opt.topK > 0) ids = ids.slice(0, opt.topK);
    const mx = logits[ids[0]] / opt.temperature;
    let p = ids.map((id) => Math.exp(logits[id] / opt.temperature - mx));
    let total = p.reduce((a, b) => a + b, 0);
    p = p.map((x) => x / total);
    if (opt.minP > 0) {
        const keep = p.filter((x) => x >= opt.minP * p[0]).length;
        ids = ids.slice(0, keep); p = p.slice(0, keep);
    }
    if (opt.topP < 1) {
        let acc = 0, keep = 0;
        while (keep < p.length && acc < opt.topP) acc += p[keep++];
        ids = ids.slice(0, keep); p = p.slice(0, keep);
    }
    total = p.reduce((a, b) => a + b, 0);
    let r = random() * total;
    for (let i = 0; i < ids.length; i++) {
        r -= p[i];
        if (r <= 0) return ids[i];
    }
    return ids[ids.length - 1];
}

// generate runs one choice: prompt evaluation on a slot, then up to maxTokens steps, each
// reported through onStep({id, logprob, top_logprobs}). It returns the finish reason, the
// prompt tokens kept and the tokens generated.
async function generate(prompt, opt, choiceIndex, onStep, aborted) {
    const slot = await acquire(prompt);
    try {
        if (aborted()) return {finish: "cancelled", cached: 0};
        const cached = await prepare(slot, prompt, opt.cachePrompt);
        const random = rng((opt.seed ?? 0) + 7919 * choiceIndex);
        const rest = prompt.slice(slot.seq.nextTokenIndex);
        let input = rest.map((t, i) => (i === rest.length - 1 ? [t, {generateNext: {logits: true}}] : t));
        const out = [];
        let text = "";
        for (let step = 0; step < opt.maxTokens; step++) {
            const res = await slot.seq.controlledEvaluate(input);
            const last = res[input.length - 1];
            if (!last?.next?.logits) throw new Error("node-llama-cpp returned no logits");
            const st = stepResult(last.next.logits, opt, random);
            out.push(st.id);
            onStep(st);
            if (!opt.ignoreEOS && model.isEogToken(st.id)) return {finish: "stop", cached};
            if (opt.stop.length > 0) {
                text = model.detokenize(out, false);
                if (opt.stop.some((s) => s !== "" && text.includes(s))) return {finish: "stop", cached};
            }
            if (aborted()) return {finish: "cancelled", cached};
            if (step + 1 < opt.maxTokens) input = [[st.id, {generateNext: {logits: true}}]];
            else await slot.seq.controlledEvaluate([st.id]); // the sequence holds every token it returned
        }
        return {finish: "length", cached};
    } finally {
        release(slot);
    }
}

function send(res, status, obj) {
    const body = JSON.stringify(obj);
    res.writeHead(status, {"Content-Type": "application/json", "Content-Length": Buffer.byteLength(body)});
    res.end(body);
}

function fail(res, status, message) {
    send(res, status, {error: {message, type: "invalid_request_error"}});
}

async function completions(req, res, body) {
    let prompt = body.prompt;
    if (Array.isArray(prompt) && prompt.length === 1 && Array.isArray(prompt[0])) prompt = prompt[0];
    if (typeof prompt === "string") prompt = Array.from(model.tokenize(prompt, true));
    if (!Array.isArray(prompt) || prompt.length === 0 || prompt.some((t) => !Number.isInteger(t) || t < 0 || t >= vocab))
        return fail(res, 400, `prompt must be a non-empty list of token ids below ${vocab}`);
    const maxTokens = body.max_tokens ?? 16;
    if (prompt.length + maxTokens > args.ctx)
        return fail(res, 400, `prompt (${prompt.length} tokens) plus max_tokens (${maxTokens}) exceeds a sequence's ${args.ctx} tokens`);
    const n = body.n ?? 1;
    if (!Number.isInteger(n) || n < 1 || n > args.sequences) return fail(res, 400, `n must be between 1 and ${args.sequences}, the sequences of the context`);
    const stop = body.stop == null ? [] : (Array.isArray(body.stop) ? body.stop : [body.stop]);
    const opt = {
        maxTokens, logprobs: body.logprobs ?? 0, temperature: body.temperature ?? 1, topK: body.top_k ?? 0,
        topP: body.top_p ?? 1, minP: body.min_p ?? 0, seed: body.seed, stop, ignoreEOS: !!body.ignore_eos,
        cachePrompt: body.cache_prompt !== false,
    };
    const id = `cmpl-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
    let closed = false;
    res.on("close", () => { if (!res.writableEnded) closed = true; });
    const aborted = () => closed;
    // usage counts the prompt once, as OpenAI does for n > 1; cached_tokens is the most
    // prompt tokens any choice's sequence kept.
    const usage = (completion, cached) => ({
        prompt_tokens: prompt.length, completion_tokens: completion, total_tokens: prompt.length + completion,
        prompt_tokens_details: {cached_tokens: cached},
    });
    if (body.stream) {
        res.writeHead(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"});
        const write = (obj) => { if (!closed) res.write(`data: ${JSON.stringify(obj)}\n\n`); };
        let completion = 0;
        const results = await Promise.all(Array.from({length: n}, (_, index) => generate(prompt, opt, index, (st) => {
            completion++;
            write({id, object: "text_completion", model: modelName, choices: [{index, text: model.detokenize([st.id], false), logprobs: {content: [st]}, finish_reason: null}]});
        }, aborted)));
        results.forEach((r, index) => write({id, object: "text_completion", model: modelName, choices: [{index, text: "", logprobs: null, finish_reason: r.finish}]}));
        if (body.stream_options?.include_usage) write({id, object: "text_completion", model: modelName, choices: [], usage: usage(completion, Math.max(...results.map((r) => r.cached)))});
        if (!closed) res.end("data: [DONE]\n\n");
        return;
    }
    const steps = Array.from({length: n}, () => []);
    const results = await Promise.all(Array.from({length: n}, (_, index) => generate(prompt, opt, index, (st) => steps[index].push(st), aborted)));
    if (closed) return;
    const choices = results.map((r, index) => ({
        index, text: model.detokenize(steps[index].map((s) => s.id), false), finish_reason: r.finish,
        logprobs: {content: steps[index]},
    }));
    const completion = steps.reduce((a, s) => a + s.length, 0);
    send(res, 200, {id, object: "text_completion", model: modelName, choices, usage: usage(completion, Math.max(...results.map((r) => r.cached)))});
}

async function flush(res) {
    for (const s of slots) {
        if (s.busy) return fail(res, 409, "a request is running: flush when idle");
    }
    for (const s of slots) await s.seq.clearHistory();
    send(res, 200, {flushed: slots.length});
}

const server = http.createServer((req, res) => {
    const url = req.url.split("?")[0];
    if (req.method === "GET" && url === "/health") return send(res, 200, {status: "ok"});
    if (req.method === "GET" && url === "/v1/models") return send(res, 200, {object: "list", data: [{id: modelName, object: "model", owned_by: `node-llama-cpp@3.22.1 (llama.cpp ${llama.llamaCppRelease?.release ?? ""})`}]});
    if (req.method === "POST" && url === "/flush") return void flush(res).catch((e) => fail(res, 500, String(e)));
    if (req.method !== "POST" || url !== "/v1/completions") return fail(res, 404, `no route ${req.method} ${url}`);
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
        let body;
        try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch (e) {
            return fail(res, 400, `the body is not JSON: ${e.message}`);
        }
        completions(req, res, body).catch((e) => {
            if (!res.headersSent) fail(res, 500, String(e?.stack ?? e));
            else res.end();
        });
    });
});
server.listen(args.port, args.host, () => {
    process.stderr.write(`serve.mjs: ${modelName} on http://${args.host}:${args.port}/v1 (${args.sequences} sequences of ${args.ctx} tokens, ${args.cache.toUpperCase()} cache, ${args.threads} threads)\n`);
});
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
