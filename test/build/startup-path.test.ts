/**
 * What a start of Keen evaluates, read from the build's module graph
 * (dist/keen.meta.json, esbuild's metafile of keen.cjs): the plain bundle
 * evaluates the static imports of app/cli/entry.ts; the snapshot also
 * evaluates what app/cli/warm.ts loads. The features most runs never use — ACP,
 * the MCP SDK and its sessions, cassettes, the CLI runner's backend, the
 * sandbox library, the TUI — must be in neither: they load on first use, from
 * side bundles or with `import()`.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { makeSandbox } from "../e2e/harness.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeTempDir } from "../temp.js";

const DIST = resolve(import.meta.dirname, "../../dist");
type Inputs = Record<string, { imports: Array<{ path: string; kind: string; external?: boolean }> }>;
const inputs: Inputs = JSON.parse(readFileSync(join(DIST, "keen.meta.json"), "utf8"));

/** The modules evaluated once `roots` are: their static imports, transitively (not `import()`). */
function evaluated(roots: string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of inputs[file]?.imports ?? []) if (i.kind !== "dynamic-import" && !i.external) stack.push(i.path);
  }
  return seen;
}

const WARM = "app/cli/warm.ts";
const warmed = (inputs[WARM]?.imports ?? []).filter((i) => i.kind === "dynamic-import" && !i.external).map((i) => i.path);
const plainStart = evaluated(["app/cli/entry.ts"]);
const snapshotStart = evaluated(["app/cli/entry.ts", WARM, ...warmed]);

/** Feature code that loads on first use only. */
const LATE = [
  /^app\/acp\//,
  /^app\/tui\//,
  /^app\/mcp\/(manager|connection|tools|stdio-transport|sdk)\.ts$/,
  /^app\/cli\/(cassette-setup|acp|tui|stdio|mcp-command)\.ts$/,
  /^app\/providers\/(cassette-|record-fetch|replay-fetch)/,
  /^app\/agent\/(cli-backend|cli-stream|permission-relay)/,
  /node_modules\/(@anthropic-ai\/sandbox-runtime|@modelcontextprotocol|@agentclientprotocol|blessed|marked|ajv|undici|linkedom|turndown|@mozilla\/readability|ipaddr\.js)\//,
  // web_fetch's machinery: the tool's file is in every start, what it runs is not (and HTML to markdown is a side bundle).
  /^app\/tools\/web\//,
];

test("the build records keen.cjs's module graph", () => {
  assert.ok(inputs["app/cli/entry.ts"], "entry.ts is in the graph");
  assert.ok(warmed.includes("app/cli/run.ts"), `warm.ts loads run.ts: ${warmed.join(" ")}`);
  assert.ok(snapshotStart.has("app/agent/engine.ts"), "the snapshot holds the engine");
});

test("a plain start evaluates only the CLI's entry: flags (with the permission modes' plain list), version, errors", () => {
  const app = [...plainStart].filter((f) => !f.startsWith("node_modules/"));
  assert.deepEqual(app.sort(), ["app/cli/entry.ts", "app/cli/errors.ts", "app/cli/main.ts", "app/cli/version.ts", "app/headless/terminal-text.ts", "protocol/modes.ts"]);
});

test("neither start evaluates ACP, MCP sessions, cassettes, the CLI runner's backend, the sandbox library or the TUI", () => {
  for (const [name, modules] of [["plain", plainStart], ["snapshot", snapshotStart]] as const) {
    const late = [...modules].filter((f) => LATE.some((pattern) => pattern.test(f)));
    assert.deepEqual(late, [], `${name} start evaluates ${late.join(", ")}`);
  }
  // The pattern list names real modules, so a renamed one cannot slip past it unnoticed.
  for (const file of ["app/acp/server.ts", "app/mcp/manager.ts", "app/cli/cassette-setup.ts", "app/agent/cli-backend.ts", "app/providers/replay-fetch.ts"]) {
    assert.ok(inputs[file] || existsSync(resolve(import.meta.dirname, "../..", file)), `${file} exists`);
  }
});

test("a run's start builds none of protocol/'s zod schemas: the engine and the CLI import its plain modules (errors, media types, modes) and its types", () => {
  // keen run loads app/cli/run.ts with import(): everything it evaluates before a request.
  const runStart = evaluated(["app/cli/entry.ts", "app/cli/run.ts"]);
  const schemas = [...runStart].filter((f) => /^protocol\/(commands|responses|messages|events|result|jsonl)\.ts$/.test(f));
  assert.deepEqual(schemas, [], `a run evaluates ${schemas.join(", ")}`);
  // The pattern names real modules; and `keen protocol schema` (sessions.ts) still builds them.
  assert.ok(inputs["protocol/events.ts"] && inputs["protocol/commands.ts"], "the schema modules are in keen.cjs");
  assert.ok(evaluated(["app/cli/sessions.ts"]).has("protocol/responses.ts"), "keen protocol schema evaluates them");
});

test("web_fetch's HTML libraries are a side bundle: keen.cjs holds none of them, its address check loads on first use", () => {
  const bundled = Object.keys(inputs).filter((f) => /node_modules\/(linkedom|turndown|@mozilla\/readability)\//.test(f));
  assert.deepEqual(bundled, []);
  assert.ok(existsSync(join(DIST, "web-html.cjs")), "dist/web-html.cjs is built");
  assert.ok(inputs["app/tools/web/hosts.ts"], "the address check is in keen.cjs, behind import()");
  assert.ok(inputs["app/tools/web-fetch.ts"]!.imports.every((i) => !i.path.startsWith("app/tools/web/") || i.kind === "dynamic-import"));
});

test("the sandbox library is a side bundle: keen.cjs holds none of its modules and requires dist/sandbox-runtime.cjs on first use", () => {
  assert.deepEqual(Object.keys(inputs).filter((f) => f.includes("node_modules/@anthropic-ai/sandbox-runtime/")), []);
  assert.ok(existsSync(join(DIST, "sandbox-runtime.cjs")), "dist/sandbox-runtime.cjs is built");
  assert.match(readFileSync(join(DIST, "keen.cjs"), "utf8"), /require\("\.\/sandbox-runtime\.cjs"\)/);
  assert.ok(inputs["app/sandbox/runtime.ts"]!.imports.every((i) => !i.path.includes("sandbox-runtime") || i.kind === "dynamic-import"), "runtime.ts loads it with import()");
  // Its helpers are found in the installed package: import.meta.url points into it.
  assert.match(readFileSync(join(DIST, "sandbox-runtime.cjs"), "utf8"), /require\.resolve\("@anthropic-ai\/sandbox-runtime\/package\.json"\)/);
});

const server = useMockLLMServer();

/** Written by the preload below: the built-in modules node had loaded when the first request's bytes left. */
const PRELOAD = `
const net = require("node:net");
const write = net.Socket.prototype.write;
let done = false;
net.Socket.prototype.write = function (...args) {
  if (!done && this.remotePort) {
    done = true;
    require("node:fs").writeFileSync(process.env.KEEN_TEST_LOADED, JSON.stringify(process.moduleLoadList));
  }
  return write.apply(this, args);
};
`;

test("a run sends its request before loading child_process, dgram or readline (stand-ins load them on first use), and bash still runs", async () => {
  const dir = makeTempDir("keen-startup-path-");
  const preload = join(dir, "preload.cjs");
  const loaded = join(dir, "loaded.json");
  writeFileSync(preload, PRELOAD);
  const sandbox = makeSandbox(server.url);
  spawnSync("git", ["init", "-q"], { cwd: sandbox.workspace });
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "echo through-the-stand-in" } }] }, { text: "done" });
  const run = await sandbox.run(["run", "--headless", "--sandbox", "off", "go"], { env: { NODE_OPTIONS: `--require ${JSON.stringify(preload)}`, KEEN_TEST_LOADED: loaded } });
  assert.equal(run.code, 0, run.stderr);
  const modules = new Set((JSON.parse(readFileSync(loaded, "utf8")) as string[]).map((m) => m.replace(/^NativeModule /, "")));
  // The list is node's own: it names what a start loads (the store's fs/promises, and net for the request itself).
  assert.ok(modules.has("net") && modules.has("fs/promises"), [...modules].join(" "));
  for (const name of ["child_process", "dgram", "readline", "readline/promises"]) assert.ok(!modules.has(name), `${name} was loaded before the request`);
  // bash reached child_process through its stand-in: its output went back to the model.
  assert.match(JSON.stringify(server.requests[1]!.body.messages), /through-the-stand-in/);
});

/**
 * Node's own modules come with a V8 code cache that V8 refuses once any V8 flag differs from the defaults it was
 * written under; refused, each built-in compiles from source (Node's fetch alone: ~25 → ~50 ms). Keen sets two
 * WebAssembly flags (app/providers/http.ts), so it sets them only once its fetch has loaded, and loads later
 * built-ins and side bundles with the defaults back on. Node's loader records which built-ins missed the cache.
 */
const CACHE_USE = `
const { internalBinding } = require("internal/test/binding");
const missed = () => [...internalBinding("builtins").getCacheUsage().compiledWithoutCache];
const net = require("node:net");
const write = net.Socket.prototype.write;
let atRequest;
net.Socket.prototype.write = function (...args) {
  if (!atRequest && this.remotePort) atRequest = missed();
  return write.apply(this, args);
};
// Which V8 flags Keen set, and whether the first request's headers had left yet (its response cannot have come).
const v8 = require("node:v8");
const setFlags = v8.setFlagsFromString;
const flags = [];
let headersSent = false;
require("node:diagnostics_channel").subscribe("undici:client:sendHeaders", () => (headersSent = true));
v8.setFlagsFromString = (flag) => {
  flags.push({ flag, headersSent });
  return setFlags(flag);
};
process.on("exit", () => require("node:fs").writeFileSync(process.env.KEEN_TEST_CACHE_USE, JSON.stringify({
  atRequest, atExit: missed(), flags, fetchLoaded: process.moduleLoadList.some((m) => m.includes("internal/deps/undici")),
})));
`;

/** The launcher's way into the plain bundle with node flags before it (they are refused in NODE_OPTIONS). */
function binWith(dir: string, flags: string[]): string {
  const bin = join(dir, "keen");
  writeFileSync(bin, `#!/bin/sh\nexec ${[process.execPath, ...flags, join(DIST, "start.cjs")].map((a) => JSON.stringify(a)).join(" ")} "$@"\n`, { mode: 0o755 });
  return bin;
}

/** A run with a sandboxed bash call and a second request, reported by the CACHE_USE preload. */
async function cacheUse(env: Record<string, string> = {}) {
  const dir = makeTempDir("keen-cache-use-");
  const preload = join(dir, "preload.cjs");
  const report = join(dir, "cache-use.json");
  writeFileSync(preload, CACHE_USE);
  const bin = binWith(dir, ["--expose-internals", "--require", preload]);
  const sandbox = makeSandbox(server.url);
  spawnSync("git", ["init", "-q"], { cwd: sandbox.workspace });
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "echo from-bash" } }] }, { text: "done" });
  const run = await sandbox.run(["run", "--headless", "go"], { bin, env: { KEEN_TEST_CACHE_USE: report, ...env } });
  assert.equal(run.code, 0, run.stderr);
  assert.match(JSON.stringify(server.requests.at(-1)!.body.messages), /from-bash/);
  return JSON.parse(readFileSync(report, "utf8")) as {
    atRequest: string[]; atExit: string[]; flags: Array<{ flag: string; headersSent: boolean }>; fetchLoaded: boolean;
  };
}

test("a run's built-in modules load from Node's code cache, before its request and after it (a sandboxed bash call and the second request); Node's fetch never loads", async () => {
  const { atRequest, atExit, flags, fetchLoaded } = await cacheUse();
  assert.deepEqual(atRequest, [], "compiled without Node's cache before the request");
  // Node's net requires cluster at the sandbox's proxies' first listen: app/sandbox/runtime.ts loads it first.
  assert.deepEqual(atExit, [], "compiled without Node's cache in the run");
  // The requests go over node:http (app/providers/http-fetch.ts): no undici, so no WebAssembly parser and no flag for it.
  assert.equal(fetchLoaded, false, "Node's fetch was loaded");
  assert.deepEqual(flags, []);
});

test("through HTTP_PROXY (npm undici): the WebAssembly flags are on before the first response can be parsed, and on again after each load with the defaults", async () => {
  const { atRequest, atExit, flags } = await cacheUse({ HTTP_PROXY: server.url, NO_PROXY: "" });
  // The sandbox starts alongside the first request; on a busy machine its proxies listen before the request leaves.
  assert.deepEqual(atRequest, [], "compiled without Node's cache before the request");
  assert.deepEqual(atExit, [], "compiled without Node's cache in the run");
  const tierUp = flags.filter((f) => f.flag.endsWith("wasm-tier-up"));
  assert.deepEqual(tierUp[0], { flag: "--no-wasm-tier-up", headersSent: false }, JSON.stringify(flags));
  assert.equal(tierUp.at(-1)!.flag, "--no-wasm-tier-up", JSON.stringify(flags));
  assert.ok(tierUp.length > 1, `the sandbox's library loaded with the defaults back on: ${JSON.stringify(flags)}`);
});

test("through HTTP_PROXY, undici's HTTP parser stays on V8's baseline code through a long answer (a TurboFan compile would hold up the exit ~0.1 s); without a proxy there is no WebAssembly at all", async () => {
  const dir = makeTempDir("keen-wasm-tier-");
  // V8 prints each WebAssembly compile with its tier.
  const bin = binWith(dir, ["--trace-wasm-compilation-times"]);
  const sandbox = makeSandbox(server.url);
  spawnSync("git", ["init", "-q"], { cwd: sandbox.workspace });
  const compiles = async (env: Record<string, string>) => {
    // Long enough to spend the parser's tiering budget when the flags do not hold (200 deltas already do).
    server.enqueue({ deltas: Array.from({ length: 1000 }, (_, i) => `word${i} `) });
    const run = await sandbox.run(["run", "--headless", "--stream-deltas", "go"], { bin, env });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout.split("\n").filter((line) => line.startsWith("Compiled "));
  };
  const proxied = await compiles({ HTTP_PROXY: server.url, NO_PROXY: "" });
  assert.ok(proxied.length > 0, "V8 traced no WebAssembly compile through the proxy");
  assert.deepEqual(proxied.filter((line) => /TurboFan/i.test(line)), []);
  assert.deepEqual(await compiles({}), [], "a request over node:http compiles no WebAssembly");
});

/**
 * zod loads on first use (scripts/build.mjs, "lazy-zod"): a text-only run whose config this build has already
 * found valid never loads it. The first run checks the config with zod and records it; an edited config is
 * checked again and an invalid one refused; a tool call still has its input checked by zod.
 */
test("zod stays off a run whose config this build checked before; an edited or invalid config and a tool call still meet zod", async () => {
  const sandbox = makeSandbox(server.url);
  spawnSync("git", ["init", "-q"], { cwd: sandbox.workspace });
  const traced = { env: { KEEN_TRACE_STARTUP: "1" } };
  const zodLoads = (stderr: string) => stderr.split("\n").filter((line) => / zod loaded$/.test(line)).length;
  const text = async () => {
    server.enqueue({ text: "hi" });
    const run = await sandbox.run(["run", "--headless", "go"], traced);
    assert.equal(run.code, 0, run.stderr);
    return zodLoads(run.stderr);
  };
  assert.equal(await text(), 1, "the first run checks the config with zod");
  assert.ok(existsSync(join(sandbox.home, "checked-config.json")), "and records that it is valid");
  assert.equal(await text(), 0, "a later run reads the same config without zod");
  const configFile = join(sandbox.home, "config.json");
  const config = JSON.parse(readFileSync(configFile, "utf8"));
  writeFileSync(configFile, JSON.stringify({ ...config, maxTurns: 7 }));
  assert.equal(await text(), 1, "an edited config is checked again");
  writeFileSync(configFile, JSON.stringify({ ...config, maxTurns: -1 }));
  const bad = await sandbox.run(["run", "go"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /config\.json: maxTurns: /);
  writeFileSync(configFile, JSON.stringify({ ...config, maxTurns: 7 }));
  // A tool call's input is checked by zod, loaded then: a bad input is the model's error to fix, a good one runs.
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: 42 } }] }, { toolCalls: [{ name: "bash", input: { command: "echo checked" } }] }, { text: "done" });
  const tool = await sandbox.run(["run", "--headless", "go"], traced);
  assert.equal(tool.code, 0, tool.stderr);
  assert.equal(zodLoads(tool.stderr), 1);
  const results = JSON.stringify(server.requests.slice(-2).map((r) => r.body.messages.at(-1)));
  assert.match(results, /Invalid input for bash/);
  assert.match(results, /checked/);
});
