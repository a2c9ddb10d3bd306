import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join, sep } from "node:path";
import { after, test } from "node:test";
import { createPermissionGate } from "../../app/agent/permission-gate.js";
import { createFileGuard } from "../../app/permissions/file-guard.js";
import { gate, networkGate } from "../../app/permissions/policy.js";
import { secretFileKind, secretNameGlobs } from "../../app/permissions/secret-names.js";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { sandboxPolicy } from "../../app/sandbox/policy.js";
import { disposeSandbox, sandboxedSpawnArgs } from "../../app/sandbox/runtime.js";
import type { EventDraft } from "../../protocol/events.js";
import { makeTempDir } from "../temp.js";

test("accept-edits runs bash only when it is confined; other modes are unchanged", () => {
  const modes = ["auto", "accept-edits", "ask", "read-only"] as const;
  assert.deepEqual(modes.map((m) => gate(m, undefined, { kind: "exec", sandboxed: true, bashConfined: true })), ["allow", "allow", "ask", "refuse"]);
  assert.deepEqual(modes.map((m) => gate(m, undefined, { kind: "exec", sandboxed: true, bashConfined: false })), ["allow", "ask", "ask", "refuse"]);
  assert.equal(gate("accept-edits", undefined, { kind: "exec", bashConfined: true }), "ask", "an exec tool that runs outside the sandbox asks");
  assert.equal(gate("accept-edits", undefined, { kind: "other", bashConfined: true }), "ask", "only commands (exec: bash) are confined");
});

test("an unknown host is asked about only in modes that ask; auto does not widen the allowlist", () => {
  assert.deepEqual((["auto", "accept-edits", "ask", "read-only"] as const).map((m) => networkGate(m)), ["refuse", "ask", "ask", "refuse"]);
  assert.equal(networkGate("ask", "allow"), "allow");
  assert.equal(networkGate("auto", "allow"), "allow");
  assert.equal(networkGate("ask", "deny"), "refuse");
  assert.equal(networkGate("read-only", "allow"), "refuse");
});

test("the permission gate asks about a host once, allow-always holds for that host only; one-shot runs deny with the reason", async () => {
  const events: EventDraft[] = [];
  let gateRef: ReturnType<typeof createPermissionGate> | undefined;
  const emit = async (event: EventDraft) => {
    events.push(event);
    if (event.kind === "permission-request") {
      queueMicrotask(() => gateRef!.answer({ type: "permission-response", request_id: event.request_id, decision: "allow-always" } as never));
    }
  };
  let n = 0;
  const interactive = (gateRef = createPermissionGate({ mode: "ask", interactive: true, emit, newId: () => `id${++n}` }));
  const req = (host: string) => ({ tool: `network:${host}`, input: { host }, summary: `connect ${host}`, callId: "c1", network: true });
  assert.deepEqual(await interactive.request(req("example.com:443")), { allow: true });
  assert.deepEqual(await interactive.request(req("example.com:443")), { allow: true });
  assert.deepEqual(events.map((e) => [e.kind, (e as { tool_name?: string }).tool_name]), [
    ["permission-request", "network:example.com:443"], ["permission-rule", "network:example.com:443"],
  ], "asked once, then the session's rule answers");
  await interactive.request(req("other.org:443"));
  assert.equal(events.filter((e) => e.kind === "permission-request").length, 2, "another host is asked about again");

  const oneShot = createPermissionGate({ mode: "accept-edits", interactive: false, emit: async () => {}, newId: () => "x" });
  const denied = await oneShot.request(req("example.com:443"));
  assert.deepEqual(denied, {
    allow: false,
    reason: "the sandbox blocked example.com:443: this one-shot run has nobody to ask; add it to sandbox.network.allowedDomains in the user's Keen config to allow it",
  });
});

test("the sandbox denies reading every location the file guard refuses (one list for both)", () => {
  const root = realpathSync(makeTempDir("keen-policy-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  const keenHome = join(root, "keen-home");
  for (const dir of [home, workspace, keenHome]) mkdirSync(dir);
  const guard = createFileGuard({ workspace, home, protectedPaths: [keenHome] });
  const policy = sandboxPolicy({ workspace, tmpDir: join(root, "tmp"), guard: { home, protectedPaths: [keenHome] } });
  const covered = (path: string) => policy.denyRead.some((d) => path === d || path.startsWith(d + sep));
  const located = [
    join(home, ".ssh", "id_rsa"), join(home, ".aws", "credentials"), join(home, ".config", "keen", "config.json"),
    join(home, ".claude.json"), join(home, ".codex", "auth.json"), join(keenHome, "config.json"), "/etc/shadow", "/run/secrets/token",
  ];
  for (const path of located) {
    assert.equal(guard.checkRead(path).ok, false, `the guard refuses ${path}`);
    assert.ok(covered(path), `the sandbox denies ${path}`);
  }
  assert.deepEqual(policy.allowedDomains, []);
});

test("secret-name globs cover every name the guard's name rules refuse", () => {
  const globs = secretNameGlobs().map((g) => g.replace(/^\*\*\//, ""));
  const matches = (name: string) => globs.some((g) => new RegExp(`^${g.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(name));
  const secret = [".env", "prod.env", ".env.local", ".envrc", "id_rsa", "id_ed25519", "ssh_host_rsa_key", "tls.pem", "server.key", "a.p12",
    "credentials.json", ".netrc", ".git-credentials", ".pgpass"];
  for (const name of secret) {
    assert.ok(secretFileKind(name), `the guard refuses ${name}`);
    assert.ok(matches(name), `a sandbox glob hides ${name}`);
  }
  assert.ok(!matches("README.md") && !matches("index.ts") && !matches("keys.txt"));
});

// The library's proxies would keep this process alive.
after(() => disposeSandbox());

test("sandboxedSpawnArgs (for MCP stdio servers) confines a server like bash", { skip: sandboxSupport().ok ? false : "no sandbox on this machine" }, async () => {
  const root = realpathSync(makeTempDir("keen-mcp-sbx-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const policy = sandboxPolicy({ workspace, tmpDir: join(root, "tmp"), guard: { home: join(root, "home"), protectedPaths: [] } });
  const { command, args } = await sandboxedSpawnArgs("sh", ["-c", `echo in > ${workspace}/in.txt; echo out > ${root}/out.txt; echo "it's done"`], policy);
  const run = spawnSync(command, args, { cwd: workspace, encoding: "utf8" });
  assert.match(run.stdout, /it's done/);
  assert.equal(readFileSync(join(workspace, "in.txt"), "utf8"), "in\n");
  assert.equal(existsSync(join(root, "out.txt")), false);
});
