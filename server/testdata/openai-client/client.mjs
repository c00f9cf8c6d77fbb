// Drives `kvref serve` with the official openai npm client, as an application would, and
// prints one JSON line per check for cmd/kvref's TestOpenAINodeClient to verify.
//
//	node client.mjs http://127.0.0.1:PORT/v1 [MODEL]
import OpenAI from "openai";

const [baseURL, model = "stories260K"] = process.argv.slice(2);
if (!baseURL) {
  console.error("usage: node client.mjs BASE_URL [MODEL]");
  process.exit(2);
}
const client = new OpenAI({ baseURL, apiKey: "kvref-needs-no-key", maxRetries: 0, timeout: 120_000 });
const print = (check, fields) => console.log(JSON.stringify({ check, ...fields }));

const messages = [
  { role: "system", content: "You tell short stories." },
  { role: "user", content: "Tell me about a cat." },
];

// Chat, not streamed.
const chat = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 });
print("chat", {
  object: chat.object,
  role: chat.choices[0].message.role,
  content: chat.choices[0].message.content,
  finish_reason: chat.choices[0].finish_reason,
  usage: chat.usage,
});

// Chat, streamed, with the usage chunk at the end.
const stream = await client.chat.completions.create({
  model, messages, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true },
});
let content = "", chunks = 0, role = null, finish = null, usage = null;
for await (const chunk of stream) {
  chunks++;
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    if (choice.delta.role) role = choice.delta.role;
    if (choice.delta.content) content += choice.delta.content;
    if (choice.finish_reason) finish = choice.finish_reason;
  }
}
print("chat_stream", { role, content, finish_reason: finish, chunks, usage });

// n > 1: three sampled replies in one request.
const several = await client.chat.completions.create({ model, messages, max_tokens: 16, temperature: 1, n: 3, seed: 7 });
print("chat_n", {
  indexes: several.choices.map((c) => c.index),
  contents: several.choices.map((c) => c.message.content),
  usage: several.usage,
});

// Log-probabilities, with kvref's exact token ids beside OpenAI's fields.
const withLogprobs = await client.chat.completions.create({
  model, messages, max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 2,
});
const lp = withLogprobs.choices[0].logprobs;
print("chat_logprobs", {
  content: withLogprobs.choices[0].message.content,
  tokens: lp.content.map((e) => e.token),
  logprobs: lp.content.map((e) => e.logprob),
  top_counts: lp.content.map((e) => e.top_logprobs.length),
  top_first: lp.content.map((e) => e.top_logprobs[0].logprob),
  token_ids: lp.token_ids,
  completion_tokens: withLogprobs.usage.completion_tokens,
});

// The legacy completions API, not streamed and streamed.
const completion = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 16, temperature: 0 });
let streamed = "";
for await (const chunk of await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 16, temperature: 0, stream: true })) {
  streamed += chunk.choices[0]?.text ?? "";
}
print("completion", { text: completion.choices[0].text, streamed, usage: completion.usage });

// Prompt log-probabilities, as evaluation harnesses ask for them: echo + logprobs +
// max_tokens 0 (a miss, then the same prompt again: a prefix hit), and vLLM's
// prompt_logprobs, which the client passes through as an extra body field.
const scored = "The cat sat on the mat and looked at the big red ball. Then it jumped over the fence.";
const echoMiss = await client.completions.create({ model, prompt: scored, echo: true, logprobs: 5, max_tokens: 0 });
const echoHit = await client.completions.create({ model, prompt: scored, echo: true, logprobs: 5, max_tokens: 0 });
const vllm = await client.completions.create({ model, prompt: scored, max_tokens: 0, prompt_logprobs: 5 });
print("echo", {
  text: echoMiss.choices[0].text,
  tokens: echoMiss.choices[0].logprobs.tokens,
  echo_miss: echoMiss.choices[0].logprobs.token_logprobs,
  echo_hit: echoHit.choices[0].logprobs.token_logprobs,
  top_counts: echoMiss.choices[0].logprobs.top_logprobs.map((t) => (t === null ? -1 : Object.keys(t).length)),
  text_offset: echoMiss.choices[0].logprobs.text_offset,
  // Keyed by token id (JavaScript orders such keys by number): the prompt's own token.
  prompt_logprobs: vllm.choices[0].prompt_logprobs.map((p, i) => (p === null ? null : p[String(echoMiss.choices[0].logprobs.token_ids[i])].logprob)),
  first: echoMiss.usage,
  second: echoHit.usage,
});

// A conversation in two requests: the second resends the first exchange, whose blocks the
// prefix cache still holds.
const first = [{ role: "user", content: "Tell me a story about a dog." }];
const turn1 = await client.chat.completions.create({ model, messages: first, max_tokens: 32, temperature: 0 });
const second = [...first, { role: "assistant", content: turn1.choices[0].message.content }, { role: "user", content: "What happened next?" }];
const turn2 = await client.chat.completions.create({ model, messages: second, max_tokens: 32, temperature: 0 });
print("multi_turn", { first: turn1.usage, second: turn2.usage, reply: turn2.choices[0].message.content });

// A bad request is the client's BadRequestError, with the field at fault.
try {
  await client.chat.completions.create({ model, messages: [{ role: "wizard", content: "hi" }] });
  print("bad_request", { status: null });
} catch (err) {
  print("bad_request", { status: err.status, param: err.param ?? err.error?.param ?? null, message: err.error?.message ?? err.message });
}
