import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { removeSandboxes, sandbox } from "./replay-helpers.js";

const server = useMockLLMServer();
after(() => removeSandboxes());

const KEY = "sk-DISTINCTIVE-key-7f3c9b2e51";
const HEADER_VALUE = "hdr-DISTINCTIVE-4e8d2a91c3";

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: a cassette, the session's copy and its export hold neither the key nor a config header value`, async () => {
    const sb = sandbox(server.url, { providers: { [provider]: { headers: { "x-team-auth": HEADER_VALUE } } } });
    writeFileSync(join(sb.workspace, "notes.txt"), `deploy key: ${KEY}\n`);
    const echo = `overloaded; key ${KEY}, header ${HEADER_VALUE}`;
    server.enqueue(
      // An error body that echoes request details, as some servers do.
      { kind: "http-error", status: 529, headers: { "retry-after": "0" }, body: provider === "anthropic" ? { type: "error", error: { type: "overloaded_error", message: echo } } : { error: { message: echo, type: "server_error" } } },
      { toolCalls: [{ name: "read_file", input: { path: "notes.txt" } }] },
      // The model repeats them (each a word of its own, so within one SSE event; see docs/CASSETTES.md).
      { text: `The key is ${KEY} and the header ${HEADER_VALUE} .` },
    );
    const cassette = join(sb.root, "secret.jsonl");
    const env = provider === "anthropic" ? { ANTHROPIC_API_KEY: KEY } : { ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: KEY };
    const r = await sb.run(["run", "--format", "json", "--model", `${provider}/m`, "--record", cassette, "what is in notes.txt?"], { env });
    assert.equal(r.code, 0, r.stderr);
    // The secrets really went over the wire, so their absence below means something.
    const sent = server.requests[0]!.headers;
    assert.equal(sent["x-team-auth"], HEADER_VALUE);
    assert.ok(sent["x-api-key"] === KEY || sent.authorization === `Bearer ${KEY}`);

    const exported = join(sb.root, "exported.jsonl");
    const id = JSON.parse(r.stdout).session_id;
    const ex = await sb.run(["sessions", "export", id, "--cassette", exported]);
    assert.equal(ex.code, 0, ex.stderr);
    const copies = readdirSync(join(sb.home, "cassettes")).map((name) => join(sb.home, "cassettes", name));
    for (const file of [cassette, exported, ...copies]) {
      const text = readFileSync(file, "utf8");
      assert.ok(!text.includes(KEY), `${file} holds the key`);
      assert.ok(!text.includes(HEADER_VALUE), `${file} holds the header value`);
      assert.ok(!text.includes("DISTINCTIVE"), `${file} holds part of a secret`);
      assert.doesNotMatch(text, /"(x-api-key|authorization)"/i, "auth headers are left out");
      assert.match(text, /\[redacted\]/);
    }
  });
}
