import { after, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createSocketServer } from "node:net";
import type { AddressInfo } from "node:net";
import { delimiter, join } from "node:path";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { startMockLLMServer, type MockLLMServer, type MockReplyStep } from "../fakes/mock-llm-server.js";
import { makeTempDir } from "../temp.js";
import { makeSandbox, parseLines, waitForStdout } from "./harness.js";
import { startStdio, type StdioClient } from "./stdio-client.js";

// Needs bwrap, socat and rg, and a kernel that lets bwrap make namespaces (.ci/run installs them).
const support = sandboxSupport();
const skip = support.ok ? false : `no sandbox on this machine: ${support.missing} (${support.install})`;
if (skip) process.stderr.write(`sandbox.test.ts: skipped: ${skip}\n`);

let server: MockLLMServer;
let web: Server;
let webHits = 0;
let webPort = 0;
before(async () => {
  server = await startMockLLMServer();
  web = createServer((_req, res) => {
    webHits++;
    res.end("hello from the host\n");
  });
  await new Promise<void>((done) => web.listen(0, "127.0.0.1", done));
  webPort = (web.address() as AddressInfo).port;
});
after(async () => {
  if (shared) {
    const { code, stderr } = await shared.client.end();
    assert.equal(code, 0, stderr);
  }
  await server.close();
  await new Promise((done) => web.close(done));
});
beforeEach(() => {
  server.reset();
  webHits = 0;
});

const KEY = "sk-ant-sandbox-test-0123456789";
type Sandbox = ReturnType<typeof makeSandbox>;

/** One headless turn running `commands` as bash calls; the run's lines and the bash results in order. */
async function bashRun(sb: Sandbox, commands: string[], flags: string[] = [], env: Record<string, string | undefined> = {}) {
  const calls: NonNullable<MockReplyStep["toolCalls"]> = commands.map((command) => ({ name: "bash", input: { command } }));
  server.enqueue({ toolCalls: calls }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", ...flags, "go"], { env: { ANTHROPIC_API_KEY: KEY, ...env } });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const results = lines.filter((l) => l.kind === "tool-result").map((l) => ({ is_error: l.is_error as boolean, result: l.result as string }));
  return { lines, results, stderr: r.stderr, start: lines.find((l) => l.kind === "session-start")! };
}

/**
 * One `keen stdio --sandbox on --permission-mode accept-edits` in one sandbox, shared by the tests about
 * what a confined command can and cannot do (not about Keen's process, which the tests with `keen run`
 * cover): each of their turns is a prompt to it instead of a Keen of its own (a sandboxed `keen run` with
 * bash costs ~0.8 s of CPU). accept-edits: with the sandbox on, bash runs unasked; an unknown host is
 * asked about. Started by the first test that needs it, ended (exit 0) after the file.
 */
let shared: { sb: Sandbox; client: StdioClient; prompts: number } | undefined;
function sharedSession() {
  if (!shared) {
    const sb = makeSandbox(server.url);
    // It lives as long as the file runs (minutes on a loaded machine): killed only after 15 of them.
    const client = startStdio(["--sandbox", "on", "--permission-mode", "accept-edits"], { ...sb.env, ANTHROPIC_API_KEY: KEY }, sb.workspace, 900_000);
    shared = { sb, client, prompts: 0 };
  }
  return shared;
}

/** One turn of the shared session running `commands` as bash calls; like bashRun, with this turn's lines only. */
async function confinedRun(commands: string[]) {
  const { sb, client } = sharedSession();
  server.enqueue({ toolCalls: commands.map((command) => ({ name: "bash", input: { command } })) }, { text: "done" });
  const id = `p${++shared!.prompts}`;
  const from = client.lines.length;
  client.send({ kind: "prompt", id, text: "go" });
  const response = await client.response(id);
  assert.equal(response.ok, true, JSON.stringify(response));
  const lines = client.lines.slice(from);
  const results = lines.filter((l) => l.kind === "tool-result").map((l) => ({ is_error: l.is_error as boolean, result: l.result as string }));
  return { sb, lines, results, start: client.lines.find((l) => l.kind === "session-start")! };
}

test("sandbox on: writes land only in the workspace; exit codes and output pass through unchanged", { skip }, async () => {
  const { sb } = sharedSession();
  const outside = join(sb.root, "outside");
  mkdirSync(outside);
  const commands = [`echo escaped > ${outside}/x.txt`, "echo inside > made.txt && cat made.txt", "printf 'a\\nb\\n'; echo err >&2; exit 7", "echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\""];
  const on = await confinedRun(commands);
  assert.equal(on.start.sandboxed, true);
  assert.equal(on.results[0]!.is_error, true);
  assert.match(on.results[0]!.result, /Read-only file system/);
  assert.equal(existsSync(join(outside, "x.txt")), false, "nothing is written outside the workspace");
  assert.deepEqual(on.results[1], { is_error: false, result: "inside\n" });
  assert.equal(readFileSync(join(sb.workspace, "made.txt"), "utf8"), "inside\n");
  assert.deepEqual(on.results[3], { is_error: false, result: "tmp\n" });

  const off = await bashRun(sb, commands, ["--sandbox", "off"]);
  assert.equal(off.start.sandboxed, false);
  assert.deepEqual(off.results[0], { is_error: false, result: "(no output)" }, "off: as today, the write outside works");
  assert.equal(readFileSync(join(outside, "x.txt"), "utf8"), "escaped\n");
  // The same command, confined or not, gives the model the same result.
  assert.deepEqual(on.results[2], off.results[2]);
  assert.deepEqual(on.results[2], { is_error: true, result: "a\nb\nerr\n\n\n[exit code 7]" });
});

test("sandbox on: credentials, Keen's config and the provider key are unreadable (env and /proc of every visible process)", { skip }, async () => {
  const { sb } = sharedSession();
  const home = sb.env.HOME!;
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), "PRIVATE-KEY-MATERIAL");
  writeFileSync(join(sb.workspace, ".env"), "DB_PASSWORD=dotenv-secret");
  // Written to workspace files and read here, past Keen's redactor: withheld, not redacted afterwards.
  const { results } = await confinedRun([
    `cat ${home}/.ssh/id_rsa > ssh.txt 2>&1; cat ~/.ssh/id_rsa >> ssh.txt 2>&1; true`,
    `cat "$KEEN_HOME/config.json" > config.txt 2>&1; ls "$KEEN_HOME" >> config.txt 2>&1; true`,
    "env > env.txt; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done > proc.txt 2>&1; echo $PPID > ppid.txt",
    "cat .env > dotenv.txt 2>&1; true",
  ]);
  assert.ok(results.every((r) => !r.is_error), JSON.stringify(results));
  const read = (name: string) => readFileSync(join(sb.workspace, name), "utf8");
  assert.doesNotMatch(read("ssh.txt"), /PRIVATE-KEY-MATERIAL/);
  // Keen's home is an empty directory inside: `ls` lists nothing.
  assert.equal(read("config.txt"), `cat: ${sb.home}/config.json: No such file or directory\n`);
  assert.doesNotMatch(read("env.txt"), new RegExp(KEY));
  assert.doesNotMatch(read("proc.txt"), new RegExp(KEY));
  assert.match(read("env.txt"), /^PATH=/m, "the environment is there, only the secrets are gone");
  assert.doesNotMatch(read("dotenv.txt"), /dotenv-secret/);
});

test("sandbox on: a host outside the allowlist is unreachable and the result says why; once allowed it is reached", { skip }, async () => {
  // Inside, loopback is the sandbox's own: a host service is reached through the proxy (README "Sandbox").
  const curl = `curl -sS -m 10 --noproxy '' -o /dev/null -w 'status %{http_code}\\n' http://127.0.0.1:${webPort}/`;
  const denied = makeSandbox(server.url);
  const blocked = await bashRun(denied, [curl], ["--sandbox", "on"]);
  assert.equal(webHits, 0, "the host server saw no request");
  assert.match(blocked.results[0]!.result, /status 403/);
  assert.match(blocked.results[0]!.result, new RegExp(`deny network-outbound 127\\.0\\.0\\.1:${webPort} .*sandbox\\.network\\.allowedDomains`));

  const allowed = makeSandbox(server.url, { sandbox: { network: { allowedDomains: [`127.0.0.1:${webPort}`] } } });
  const reached = await bashRun(allowed, [curl], ["--sandbox", "on"]);
  assert.deepEqual(reached.results[0], { is_error: false, result: "status 200\n" });
  assert.equal(webHits, 1);
});

test("keen stdio: an unknown host is a permission request; allow-always reaches it and holds for the session", { skip }, async () => {
  const { client } = sharedSession();
  const curl = `curl -sS -m 20 --noproxy '' -o /dev/null -w 'status %{http_code}\\n' http://127.0.0.1:${webPort}/`;
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: curl } }] }, { text: "one" }, { toolCalls: [{ name: "bash", input: { command: curl } }] }, { text: "two" });
  // The shared session (accept-edits): with the sandbox on, bash itself runs unasked; only the host is asked about.
  const from = client.lines.length;
  client.send({ kind: "prompt", id: "net-1", text: "fetch" });
  const ask = await client.next((l) => l.kind === "permission-request", from);
  assert.equal(ask.tool_name, `network:127.0.0.1:${webPort}`);
  assert.deepEqual(JSON.parse(ask.input), { host: "127.0.0.1", port: webPort, call: "bash" });
  assert.equal(webHits, 0, "nothing reaches the host before the answer");
  client.send({ kind: "permission-response", id: "net-2", request_id: ask.request_id, decision: "allow-always" });
  await client.response("net-1");
  client.send({ kind: "prompt", id: "net-3", text: "again" });
  await client.response("net-3");
  const lines = client.lines.slice(from);
  const results = lines.filter((l) => l.kind === "tool-result").map((l) => l.result);
  assert.deepEqual(results, ["status 200\n", "status 200\n"]);
  assert.equal(lines.filter((l) => l.kind === "permission-request").length, 1, "asked once for the session");
  assert.equal(webHits, 2);
});

test("sandbox on: a setsid daemon is gone when the command ends", { skip }, async () => {
  const marker = `${process.pid}.${Date.now() % 100000}`;
  // In the shared session: the daemon must be gone while Keen still runs, not only once it has exited.
  const { results } = await confinedRun([`setsid sleep ${marker} > /dev/null 2>&1 < /dev/null & echo started`]);
  assert.deepEqual(results[0], { is_error: false, result: "started\n" });
  assert.deepEqual(processesWith(marker), [], "no process of the command outlives it");
});

test("sandbox on: no command can open a unix socket (the library's seccomp helper, found from Keen's side bundle); off, it connects", { skip }, async () => {
  const { sb } = sharedSession();
  // A host service on a unix socket the sandbox can see (the workspace is bound in): seccomp, not the path, must stop it.
  const path = join(sb.workspace, "s.sock");
  const host = createSocketServer((socket) => socket.end());
  await new Promise<void>((done) => host.listen(path, done));
  try {
    const probe = `${process.execPath} -e "require('net').connect(process.argv[1]).on('connect', () => console.log('connected')).on('error', (e) => console.log(e.code))" ${path}`;
    const on = await confinedRun([probe]);
    assert.deepEqual(on.results[0], { is_error: false, result: "EPERM\n" });
    const off = await bashRun(sb, [probe], ["--sandbox", "off"]);
    assert.deepEqual(off.results[0], { is_error: false, result: "connected\n" });
  } finally {
    await new Promise((done) => host.close(done));
  }
});

test("accept-edits runs bash without asking when the sandbox is on; off, or acceptEditsRunsBash false, it asks (refused here)", { skip }, async () => {
  // The shared session runs with --sandbox on --permission-mode accept-edits.
  const { sb } = sharedSession();
  const confined = await confinedRun(["echo ran"]);
  assert.deepEqual(confined.results[0], { is_error: false, result: "ran\n" });
  const unconfined = await bashRun(sb, ["echo ran"], ["--sandbox", "off", "--permission-mode", "accept-edits"]);
  assert.match(unconfined.results[0]!.result, /needs the user's approval in accept-edits mode/);
  const strict = makeSandbox(server.url, { sandbox: { acceptEditsRunsBash: false } });
  const asked = await bashRun(strict, ["echo ran"], ["--sandbox", "on", "--permission-mode", "accept-edits"]);
  assert.match(asked.results[0]!.result, /needs the user's approval/);
});

test("a project config may turn the sandbox on, never off, and sandboxed bash cannot rewrite it", { skip }, async () => {
  const sb = makeSandbox(server.url, { sandbox: { mode: "off" } });
  mkdirSync(join(sb.workspace, ".keen"));
  writeFileSync(join(sb.workspace, ".keen", "config.json"), JSON.stringify({ sandbox: { mode: "on" } }));
  const project = await bashRun(sb, ["echo '{}' > .keen/config.json"]);
  assert.equal(project.start.sandboxed, true);
  assert.match(project.results[0]!.result, /Read-only file system/, "like the guard, the sandbox keeps the project config read-only");
  assert.equal(readFileSync(join(sb.workspace, ".keen", "config.json"), "utf8"), JSON.stringify({ sandbox: { mode: "on" } }));
  const other = makeSandbox(server.url, { sandbox: { mode: "on" } });
  mkdirSync(join(other.workspace, ".keen"));
  writeFileSync(join(other.workspace, ".keen", "config.json"), JSON.stringify({ sandbox: { mode: "off" } }));
  assert.equal((await bashRun(other, ["true"], ["--sandbox", "off"])).start.sandboxed, false, "the user's own flag turns it off");
  assert.equal((await bashRun(other, ["true"])).start.sandboxed, true);
});

test("without bwrap, socat and rg on PATH: auto runs unconfined and says so once; on is a usage error naming them", async () => {
  const sb = makeSandbox(server.url);
  const env = { PATH: pathWithout(["bwrap", "socat", "rg"]) };
  const outside = join(sb.root, "outside");
  mkdirSync(outside);
  const auto = await bashRun(sb, [`echo escaped > ${outside}/x.txt`], ["--sandbox", "auto"], env);
  assert.equal(auto.start.sandboxed, false);
  assert.match(auto.start.sandbox_fallback, /bubblewrap/);
  assert.equal(readFileSync(join(outside, "x.txt"), "utf8"), "escaped\n", "the run works, unconfined");
  const warning = auto.stderr.split("\n").filter((l) => l.includes("unconfined"));
  assert.equal(warning.length, 1, auto.stderr);
  assert.match(warning[0]!, /^keen: bash runs unconfined: the sandbox needs bwrap \(bubblewrap\), socat, rg \(ripgrep\); install: apt-get install bubblewrap socat ripgrep/);

  server.enqueue({ text: "never" });
  const on = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"], { env });
  assert.equal(on.code, 2);
  assert.equal(on.stdout, "");
  assert.equal(on.stderr, "keen: sandbox mode is on, but the sandbox needs bwrap (bubblewrap), socat, rg (ripgrep); install: apt-get install bubblewrap socat ripgrep (Debian/Ubuntu)\n");
  // A bad --sandbox value is a usage error of every front end: test/cli/front-end-flags.test.ts, in process.
});

/** A PATH of symlinks to everything on this PATH except `hidden`. */
function pathWithout(hidden: string[]): string {
  const bin = makeTempDir("keen-path-");
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (hidden.includes(name) || existsSync(join(bin, name))) continue;
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  return bin;
}

/** Pids of processes whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  return readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });
}

test("a Keen killed mid-command leaves one temp directory, and the next sandboxed Keen removes it and ends the processes it left", { skip }, async () => {
  const sb = makeSandbox(server.url);
  const tmp = sb.env.TMPDIR!;
  const roots = () => readdirSync(tmp).filter((name) => name.startsWith("keen-sandbox-"));
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "echo started; sleep 30" } }] });
  let pid = 0;
  const killed = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "--sandbox", "on", "go"], {
    onSpawn: (child) => {
      pid = child.pid!;
      void waitForStdout(child, (out) => /"tool-update".*started/.test(out)).then(() => child.kill("SIGKILL"), () => {});
    },
  });
  assert.equal(killed.signal, "SIGKILL");
  const left = roots();
  assert.equal(left.length, 1, `left: ${left}`);
  assert.match(left[0]!, new RegExp(`^keen-sandbox-${pid}-`));
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "echo again" } }] }, { text: "done" });
  const next = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"]);
  assert.equal(next.code, 0, next.stderr);
  assert.deepEqual(roots(), [], "the stale directory was swept, and the second run removed its own on exit");
  const stale = join(tmp, left[0]!);
  const bridges = readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "latin1").includes(stale);
    } catch {
      return false;
    }
  });
  assert.deepEqual(bridges, [], "the killed Keen's bridge processes (socat on its sockets) were ended too");
});
