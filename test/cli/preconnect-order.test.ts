import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPreparer, type FrontEndSettings } from "../../app/cli/engine-setup.js";
import { openHost } from "../../app/cli/host.js";
import { makeTempDir } from "../temp.js";

// Where in set-up the provider's connection starts (issue 29 item 1): as soon as the base URL is known and
// no usage error can follow, before the sandbox, the tools, MCP servers, the SDK and the store. The
// order is read from set-up's trace and an injected preconnect, never from timing; nothing connects.

const BASE = "http://127.0.0.1:9/mock";
const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: BASE, PATH: process.env.PATH };

function world(config: Record<string, unknown> = {}) {
  const home = makeTempDir("keen-preconnect-home-");
  const workspace = makeTempDir("keen-preconnect-ws-");
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
  return { paths: { configFile: join(home, "config.json"), dataDir: home }, workspace };
}

/** Prepares one session with `settings`; returns the steps in order ("connect <url>" where the injected preconnect ran) or the error. */
async function steps(settings: Partial<FrontEndSettings>, config: Record<string, unknown> = {}) {
  const { paths, workspace } = world(config);
  const seen: string[] = [];
  const prepare = createPreparer(paths, {
    headless: true, defaultMode: "auto", sandbox: "off", ...settings,
    preconnect: (url) => void seen.push(`connect ${url}`),
    trace: (step) => seen.push(step),
  }, env);
  try {
    const setup = await prepare({ id: "s1", cwd: workspace });
    await setup.close?.();
    return { seen };
  } catch (error) {
    return { seen, error: error as Error };
  }
}

test("the connection starts before the sandbox, the tools, MCP servers and the provider's SDK", async () => {
  const { seen, error } = await steps({});
  assert.equal(error, undefined);
  assert.deepEqual(seen, [`connect ${BASE}`, "preconnect", "sandbox", "tools", "mcp", "provider"]);
});

test("tool lists are checked against the built tools first: an unknown name connects nothing, a known one connects after the tools", async () => {
  const bad = await steps({ allowedTools: ["no_such_tool"] });
  assert.match(String(bad.error?.message), /unknown tool "no_such_tool"/);
  assert.ok(!bad.seen.some((s) => s.startsWith("connect")), bad.seen.join(", "));
  const good = await steps({ disallowedTools: ["bash"] });
  assert.equal(good.error, undefined);
  assert.deepEqual(good.seen, ["sandbox", "tools", `connect ${BASE}`, "preconnect", "mcp", "provider"]);
});

test("a config's tool list waits for the check too", async () => {
  const { seen, error } = await steps({}, { tools: { disallowed: ["nope"] } });
  assert.match(String(error?.message), /unknown tool "nope"/);
  assert.ok(!seen.some((s) => s.startsWith("connect")));
});

test("usage errors found before the connection connect nothing: a bad --mcp-config, no provider", async () => {
  const mcp = await steps({ mcpConfig: ["{not json"] });
  assert.ok(mcp.error, "a bad --mcp-config is an error");
  assert.deepEqual(mcp.seen, []);
  const noModel = await steps({}, { model: "nobody/model" });
  assert.match(String(noModel.error?.message), /unknown provider "nobody"/);
  assert.deepEqual(noModel.seen, []);
});

test("sandbox on connects only once the platform check has passed", async () => {
  const { seen, error } = await steps({ sandbox: "on" });
  if (error) assert.ok(!seen.some((s) => s.startsWith("connect")), "no sandbox here: a usage error, nothing connected");
  else assert.ok(seen.indexOf("sandbox") < seen.findIndex((s) => s.startsWith("connect")), seen.join(", "));
});

test("the CLI runner connects nothing of Keen's", async () => {
  const { seen } = await steps({ runner: "cli" });
  assert.ok(!seen.some((s) => s.startsWith("connect")), seen.join(", "));
});

test("keen run's host connects before the store holds anything of the session", async () => {
  const { paths, workspace } = world();
  const before = process.env.KEEN_HOME;
  process.env.KEEN_HOME = paths.dataDir;
  const storeAtConnect: string[][] = [];
  try {
    const host = await openHost("run", {
      sandbox: "off",
      preconnect: (url) => void storeAtConnect.push(readdirSync(paths.dataDir).filter((name) => name !== "config.json").concat(url)),
    });
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const session = await host.open(await host.start({}).then((start) => ({ ...start, cwd: workspace })));
      await session.close();
    } finally {
      for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
      Object.assign(process.env, saved);
    }
    assert.deepEqual(storeAtConnect, [[BASE]], "one connection, with nothing written to the data directory yet");
    assert.equal(existsSync(join(paths.dataDir, "sessions")), false);
  } finally {
    if (before === undefined) delete process.env.KEEN_HOME;
    else process.env.KEEN_HOME = before;
  }
});
