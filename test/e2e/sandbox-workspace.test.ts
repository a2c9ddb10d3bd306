/**
 * Issue 23, items 1 and 3: a sandboxed command leaves nothing in the workspace that it did
 * not write (inside it, `git status --porcelain` of a clean repository prints nothing, and
 * after it, on every ending), a protected path it creates is removed and the result says so,
 * and a stop gives the command the SIGTERM grace an unconfined one gets.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, waitForStdout, type KeenRun } from "./harness.js";
import { startStdio, type StdioClient } from "./stdio-client.js";

const support = sandboxSupport();
const skip = support.ok ? false : `no sandbox on this machine: ${support.missing} (${support.install})`;
const server = useMockLLMServer();

const GIT_ENV = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };
// Printed first, so any line before "checked" in the output would be a path git saw.
const CHECK = "git status --porcelain --untracked-files=all; echo checked";

/** A sandbox whose workspace is a git repository with one commit and nothing untracked. */
function gitSandbox() {
  const sb = makeSandbox(server.url);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: sb.workspace, env: { ...process.env, ...GIT_ENV }, encoding: "utf8" });
  git("init", "-q");
  git("commit", "-q", "--allow-empty", "-m", "init");
  return { sb, git };
}

/** `keen run` of one sandboxed bash call; `stop` (given the child) ends it once the command has printed "checked". */
function runCommand(sb: ReturnType<typeof makeSandbox>, input: Record<string, unknown>, stop?: (child: import("node:child_process").ChildProcess) => void): Promise<KeenRun> {
  server.enqueue({ toolCalls: [{ name: "bash", input }] }, { text: "done" });
  return sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "--sandbox", "on", "go"], {
    env: GIT_ENV,
    onSpawn: stop && ((child) => void waitForStdout(child, (out) => /"tool-update".*checked/.test(out)).then(() => stop(child), () => {})),
  });
}

function result(r: KeenRun): string {
  return parseLines(r.stdout).find((l) => l.kind === "tool-result")!.result;
}

/**
 * One `keen stdio --sandbox on` for the tests about the command, not about how Keen's process ends
 * (a clean repository inside, a commit, the protected paths, the command's own timeout): each test
 * runs its command in a new session in a git repository of its own, instead of a Keen of its own
 * (~0.8 s of CPU each). The session's sandbox is made for its directory.
 */
let shared: { sb: ReturnType<typeof makeSandbox>; client: StdioClient; tests: number } | undefined;
after(async () => {
  if (shared) {
    const { code, stderr } = await shared.client.end();
    assert.equal(code, 0, stderr);
  }
});

/** A new git repository with one commit and a new session in it in the shared Keen; `run` runs one bash call there. */
async function repoSession() {
  if (!shared) {
    const sb = makeSandbox(server.url);
    // It lives as long as the file runs (minutes on a loaded machine): killed only after 15 of them.
    shared = { sb, client: startStdio(["--sandbox", "on", "--permission-mode", "auto"], { ...sb.env, ...GIT_ENV }, sb.workspace, 900_000), tests: 0 };
  }
  const { sb, client } = shared;
  const tag = `t${++shared.tests}`;
  const workspace = join(sb.root, `repo-${tag}`);
  mkdirSync(workspace);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: workspace, env: { ...process.env, ...GIT_ENV }, encoding: "utf8" });
  git("init", "-q");
  git("commit", "-q", "--allow-empty", "-m", "init");
  client.send({ kind: "new-session", id: `${tag}-new`, cwd: workspace });
  assert.equal((await client.response(`${tag}-new`)).ok, true);
  /** One turn running `input` as a bash call; its lines. */
  const run = async (input: Record<string, unknown>) => {
    server.enqueue({ toolCalls: [{ name: "bash", input }] }, { text: "done" });
    const from = client.lines.length;
    client.send({ kind: "prompt", id: `${tag}-p`, text: "go" });
    const response = await client.response(`${tag}-p`);
    assert.equal(response.ok, true, JSON.stringify(response));
    const lines = client.lines.slice(from);
    const start = [...client.lines].reverse().find((l) => l.kind === "session-start");
    assert.deepEqual([start?.cwd, start?.sandboxed], [workspace, true], "the turn ran in this repository's session, sandboxed");
    return { lines, result: lines.find((l) => l.kind === "tool-result")!.result as string };
  };
  return { workspace, git, run };
}

test("inside a sandboxed command git sees a clean repository, git add -A && git commit work, and nothing is left after", { skip }, async () => {
  const { workspace, git, run } = await repoSession();
  const r = await run({ command: `${CHECK}; echo data > file.txt && git add -A && git commit -qm work && git status --porcelain && echo committed` });
  assert.equal(r.result, "checked\ncommitted\n");
  assert.equal(git("status", "--porcelain", "--untracked-files=all", "--ignored"), "");
  assert.deepEqual(readdirSync(workspace).sort(), [".git", "file.txt"]);
  assert.equal(git("log", "--format=%s"), "work\ninit\n");
});

test("a sandboxed command ended by its timeout: the repository is clean inside and after", { skip }, async () => {
  const { workspace, git, run } = await repoSession();
  const r = await run({ command: `${CHECK}; sleep 60`, timeout_ms: 5000 });
  const updates = r.lines.filter((l) => l.kind === "tool-update");
  assert.equal(updates[0]?.tail, "checked\n", `git saw nothing before "checked": ${JSON.stringify(r.lines)}`);
  assert.match(r.result, /^checked\n(Terminated\n)?\n\n\[(timed out|aborted)/);
  assert.equal(git("status", "--porcelain", "--untracked-files=all", "--ignored"), "");
  assert.deepEqual(readdirSync(workspace), [".git"]);
});

// Endings of Keen's own process: a Keen each.
for (const ending of ["SIGINT", "SIGTERM", "SIGKILL"] as const) {
  test(`a sandboxed command ended by ${ending} to Keen: the repository is clean inside and after`, { skip }, async () => {
    const { sb, git } = gitSandbox();
    const r = await runCommand(sb, { command: `${CHECK}; sleep 60` }, (child) => child.kill(ending));
    const updates = parseLines(r.stdout.split("\n").filter((l) => l.startsWith("{") && l.endsWith("}")).join("\n")).filter((l) => l.kind === "tool-update");
    assert.equal(updates[0]?.tail, "checked\n", `git saw nothing before "checked": ${r.stdout}`);
    if (ending === "SIGKILL") assert.equal(r.signal, "SIGKILL");
    else assert.match(result(r), /^checked\n(Terminated\n)?\n\n\[(timed out|aborted)/);
    assert.equal(git("status", "--porcelain", "--untracked-files=all", "--ignored"), "");
    assert.deepEqual(readdirSync(sb.workspace), [".git"]);
  });
}

test("a protected path the command creates is removed after it and the result says so; existing ones stay read-only", { skip }, async () => {
  const { workspace, git, run } = await repoSession();
  const r = await run({
    command: `${CHECK}; echo '{}' > .mcp.json; mkdir -p .vscode .claude/commands && echo x > .vscode/settings.json && echo y > .claude/commands/c.md; echo hook > .git/hooks/post-checkout; echo ok > kept.txt; ls -A`,
  });
  const text = r.result;
  assert.match(text, /^checked\n.*Read-only file system\n/s, "the repository's hooks stay read-only");
  assert.match(text, /\.mcp\.json\n/, "the command saw what it made while it ran");
  assert.match(text, /<sandbox_removed>\.mcp\.json, \.vscode, \.claude\/commands: sandboxed commands may not create these/);
  assert.deepEqual(readdirSync(workspace).sort(), [".git", "kept.txt"]);
  assert.equal(existsSync(join(workspace, ".git", "hooks", "post-checkout")), false);
  assert.equal(git("status", "--porcelain"), "?? kept.txt\n");
});

test("SIGTERM to Keen during a sandboxed command: the command gets SIGTERM and its grace, as an unconfined one does", { skip }, async () => {
  for (const mode of ["off", "on"]) {
    const sb = makeSandbox(server.url);
    // The handler is in a child of the command's shell, as in \`npm test\` after a \`cd\`: the
    // shell's own end must not end it before its grace.
    writeFileSync(join(sb.workspace, "handler.sh"), "trap 'sleep 0.3; echo cleaned > cleanup.txt; echo cleaned; exit 0' TERM\necho checked\nwhile :; do sleep 0.1; done\n");
    server.enqueue({ toolCalls: [{ name: "bash", input: { command: "true && bash handler.sh; echo not-reached" } }] });
    const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "--sandbox", mode, "run handler.sh, which writes cleanup.txt"], {
      onSpawn: (child) => void waitForStdout(child, (out) => /"tool-update".*checked/.test(out)).then(() => child.kill("SIGTERM"), () => {}),
    });
    assert.equal(r.code, 143, r.stderr);
    assert.equal(readFileSync(join(sb.workspace, "cleanup.txt"), "utf8"), "cleaned\n", `--sandbox ${mode}: the handler ran to its end`);
    assert.match(result(r), /^checked\n(Terminated\n)?cleaned\n/, mode);
    assert.doesNotMatch(result(r), /not-reached/, mode);
  }
});

test("a Keen ended by a second SIGINT mid-command still removes the protected paths the command created", { skip }, async () => {
  const { sb, git } = gitSandbox();
  // The command ignores TERM, so the first SIGINT's stop waits out the grace; the second exits at once.
  let interrupts = 0;
  const r = await runCommand(sb, { command: `trap '' TERM; echo '{}' > .mcp.json; mkdir .vscode; ${CHECK}; sleep 60` }, (child) => {
    child.kill("SIGINT");
    interrupts++;
    setTimeout(() => child.kill("SIGINT"), 100);
  });
  assert.equal(interrupts, 1);
  assert.equal(r.code, 130, r.stderr);
  assert.deepEqual(readdirSync(sb.workspace), [".git"]);
  assert.equal(git("status", "--porcelain", "--untracked-files=all"), "");
});

test("a background job left running when the session ends: no process, no file of it remains", { skip }, async () => {
  const { sb, git } = gitSandbox();
  const marker = `${process.pid}${Date.now() % 100000}`;
  const job = `echo '{}' > .mcp.json; echo made > "$TMPDIR/job.txt"; exec sleep 300.${marker}`;
  // The second call waits inside the sandbox until the job has written its files.
  const check = `until [ -e .mcp.json ] && [ -e "$TMPDIR/job.txt" ]; do sleep 0.05; done; echo seen`;
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: job, background: true } }] }, { toolCalls: [{ name: "bash", input: { command: check } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.match(lines.filter((l) => l.kind === "tool-result")[1]!.result, /^seen\n/);
  assert.deepEqual(lines.filter((l) => l.kind === "job").map((l) => l.state), ["running", "killed"]);
  const pids = readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
    } catch {
      return false;
    }
  });
  assert.deepEqual(pids, [], "no process of the job outlives the session");
  assert.deepEqual(readdirSync(sb.workspace), [".git"]);
  assert.equal(git("status", "--porcelain", "--untracked-files=all", "--ignored"), "");
  assert.deepEqual(readdirSync(sb.env.TMPDIR!).filter((name) => name.startsWith("keen-sandbox-")), [], "the session's temp directory, the job's file in it, is gone");
});
