import { test } from "node:test";
import assert from "node:assert/strict";
import { createRedactor, redactingEmit, REDACTED, secretVariants } from "../../app/permissions/redact.js";
import { knownSecrets } from "../../app/cli/secrets.js";

const KEY = "sk-ant-api03-abcdefghijklmnop";

test("a known value is replaced wherever it appears; short values are never masked", () => {
  const r = createRedactor([KEY, "false", "1", "short7!", undefined, ""]);
  assert.equal(r.active, true);
  assert.equal(r.redact(`key=${KEY}; again ${KEY}.`), `key=${REDACTED}; again ${REDACTED}.`);
  assert.equal(r.redact("false 1 short7! stay"), "false 1 short7! stay");
  assert.equal(createRedactor(["false", "1234567"]).active, false);
  assert.equal(createRedactor([]).redact(KEY), KEY);
});

test("keys with whitespace and newlines: the whole value, each long line, the trimmed and JSON-escaped forms", () => {
  const multi = "first-line-of-key\nsecond-line-of-key\n";
  const r = createRedactor([multi, "  padded-secret-value  ", 'quote"and\\slash-key']);
  assert.equal(r.redact(`A${multi}B`), `A${REDACTED}B`);
  assert.equal(r.redact("only second-line-of-key here"), `only ${REDACTED} here`);
  assert.equal(r.redact(JSON.stringify({ k: multi })), `{"k":"${REDACTED}"}`);
  assert.equal(r.redact("export X=padded-secret-value"), `export X=${REDACTED}`);
  assert.equal(r.redact(JSON.stringify('quote"and\\slash-key')), `"${REDACTED}"`);
  // PEM armour is public; the body lines are secret.
  assert.deepEqual(secretVariants("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----"), [
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----",
    "MIIEvQIBADANBgkqhkiG9w0B",
    "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0B\\n-----END PRIVATE KEY-----",
  ]);
});

test("regex metacharacters in a value are literal", () => {
  const r = createRedactor(["a.b*c+d?e(f)[g]{h}|i^j$k\\l"]);
  assert.equal(r.redact("x a.b*c+d?e(f)[g]{h}|i^j$k\\l y"), `x ${REDACTED} y`);
  assert.equal(r.redact("aXb*c+d?e(f)[g]{h}|i^j$k\\l"), "aXb*c+d?e(f)[g]{h}|i^j$k\\l");
});

test("redactDeep: every string at any depth, copy on write, no recursion limit", () => {
  const r = createRedactor([KEY]);
  const clean = { a: ["x", { b: "y" }], n: 1, z: null };
  assert.equal(r.redactDeep(clean), clean, "nothing to hide: the same object");
  const dirty = { kind: "tool-result", result: `out ${KEY}`, details: { list: [1, KEY, { deep: KEY }] }, ok: true };
  const out = r.redactDeep(dirty);
  assert.deepEqual(out, { kind: "tool-result", result: `out ${REDACTED}`, details: { list: [1, REDACTED, { deep: REDACTED }] }, ok: true });
  assert.equal(dirty.result, `out ${KEY}`, "the input is not modified");
  let deep: any = KEY;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  let node = r.redactDeep(deep);
  for (let i = 0; i < 100_000; i++) node = node[0];
  assert.equal(node, REDACTED);
});

test("stream(): a secret split across chunks at every position is caught", () => {
  const r = createRedactor([KEY, "other-secret-value-that-is-long"]);
  const text = `head ${KEY} middle other-secret-value-that-is-long tail ${KEY}`;
  for (let size = 1; size <= text.length; size++) {
    const s = r.stream();
    let out = "";
    for (let i = 0; i < text.length; i += size) out += s.push(text.slice(i, i + size));
    out += s.end();
    assert.equal(out, `head ${REDACTED} middle ${REDACTED} tail ${REDACTED}`, `chunk size ${size}`);
  }
  // Only a tail that could begin a secret waits; other progress output passes at once.
  const s = r.stream();
  assert.deepEqual([s.push("started\n"), s.push("then sk-ant"), s.push("-api03-x and on"), s.end()], ["started\n", "then ", "sk-ant-api03-x and on", ""]);
  const passthrough = createRedactor([]).stream();
  assert.deepEqual([passthrough.push("abc"), passthrough.end()], ["abc", ""]);
});

test("redactingEmit redacts every event before the wrapped emitter sees it", async () => {
  const seen: unknown[] = [];
  const emit = redactingEmit(createRedactor([KEY]), async (e: unknown) => void seen.push(e));
  await emit({ kind: "error", message: `401 invalid x-api-key: ${KEY}` });
  assert.deepEqual(seen, [{ kind: "error", message: `401 invalid x-api-key: ${REDACTED}` }]);
});

test("knownSecrets: secret-looking env names, provider key variables, config header values", () => {
  const values = knownSecrets(
    { ANTHROPIC_API_KEY: "ak", PGPASSWORD: "pg", MY_LLM: "llm", HOME: "/home/u", TOKENIZERS_PARALLELISM: "false" },
    {
      local: { kind: "openai", apiKeyEnv: "MY_LLM", defaultModel: "m", models: {}, headers: { authorization: "Bearer hdr", "x-s": "{session_id}" } },
    },
  );
  assert.deepEqual(values.sort(), ["Bearer hdr", "ak", "llm", "pg"]);
});

test("measure: redacting 1 MB of text and 10,000 small events with 40 secrets", () => {
  const r = createRedactor(Array.from({ length: 40 }, (_, i) => `secret-value-number-${i}-${"x".repeat(i)}`));
  const big = "lorem ipsum dolor sit amet ".repeat(40_000);
  let t = performance.now();
  assert.equal(r.redact(big), big);
  const bigMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < 10_000; i++) r.redactDeep({ kind: "text-delta", role: "assistant", delta: `word ${i} `, attempt: 1 });
  const eventsMs = performance.now() - t;
  console.log(`redact 1 MB: ${bigMs.toFixed(1)} ms; 10,000 delta events: ${eventsMs.toFixed(1)} ms`);
});
