import { test } from "node:test";
import assert from "node:assert/strict";
import { createRedactor, REDACTED, secretVariants } from "../../app/permissions/redact.js";
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

test("knownSecrets: secret-looking env names, provider key variables, config header values", () => {
  const values = knownSecrets(
    { ANTHROPIC_API_KEY: "ak", PGPASSWORD: "pg", MY_LLM: "llm", HOME: "/home/u", TOKENIZERS_PARALLELISM: "false" },
    {
      local: { kind: "openai", apiKeyEnv: "MY_LLM", defaultModel: "m", models: {}, headers: { authorization: "Bearer hdr", "x-s": "{session_id}" } },
    },
  );
  assert.deepEqual(values.sort(), ["Bearer hdr", "ak", "llm", "pg"]);
});

test("large text with no secret in it passes through unchanged; a secret inside a small event is redacted", () => {
  const r = createRedactor(Array.from({ length: 40 }, (_, i) => `secret-value-number-${i}-${"x".repeat(i)}`));
  const big = "lorem ipsum dolor sit amet ".repeat(40_000);
  assert.equal(r.redact(big), big);
  const event = r.redactDeep({ kind: "text-delta", role: "assistant", delta: "word secret-value-number-3-xxx end", attempt: 1 });
  assert.doesNotMatch(JSON.stringify(event), /secret-value-number-3-xxx/);
});
