import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import {
  client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError,
  type ClientCapabilities, type ClientContext, type InitializeResponse, type RequestPermissionRequest, type SessionNotification,
} from "@agentclientprotocol/sdk";
import { KEEN_BIN, makeSandbox } from "./harness.js";

/** An answer the test client gives to `session/request_permission`: an option id, or the cancelled outcome. */
export type PermissionAnswer = string | "cancelled";

/** `keen acp` under the SDK's own client, recording every update and permission request. */
export interface AcpClient {
  child: ChildProcess;
  /** Every `session/update`, in arrival order. */
  updates: SessionNotification[];
  /** Every `session/request_permission`, in arrival order. */
  permissions: RequestPermissionRequest[];
  /** Answers for the next permission requests, taken in order (a request finding none waits). */
  answer(...answers: PermissionAnswer[]): void;
  /**
   * The editor's open buffers by absolute path: `fs/read_text_file` answers from here, else
   * from the disk (as an editor does); `fs/write_text_file` writes here, never to the disk.
   * Used only when `run` advertises the fs capabilities.
   */
  buffers: Map<string, string>;
  /** Every fs request, in arrival order: [method, path]. */
  fsRequests: [string, string][];
  /** Paths whose fs requests fail (an editor that cannot open them). */
  failing: Set<string>;
  /** Makes reads of `path` hang until Keen withdraws them (`$/cancel_request`); resolves when one arrives. */
  stall(path: string): Promise<void>;
  /** Every stdout line as written (to check that stdout carries only JSON-RPC). */
  raw: string[];
  /** Every line the SDK's client wrote to keen's stdin (test/e2e/acp-schema.ts checks both ways). */
  sent: string[];
  stderr(): string;
  /** Connects, runs `initialize`, then `op`; closes keen's stdin (as an editor does) when `op` settles. */
  run<T>(op: (ctx: ClientContext, init: InitializeResponse) => Promise<T>, capabilities?: ClientCapabilities): Promise<T>;
  /** Resolves with the first update from index `from` on that matches. */
  waitFor(match: (n: SessionNotification) => boolean, from?: number): Promise<SessionNotification>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `bin/keen acp …`; killed after `timeoutMs` so a hang fails the test instead of blocking it. */
export function startAcp(args: string[], env: Record<string, string | undefined>, cwd: string, timeoutMs = 30_000): AcpClient {
  const full: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete full[k];
    else full[k] = v;
  }
  const child = spawn(KEEN_BIN, ["acp", ...args], { cwd, env: full, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const raw: string[] = [];
  let partial = "";
  child.stdout!.on("data", (d: Buffer) => {
    partial += d.toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop()!;
    raw.push(...lines.filter(Boolean));
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    }),
  );

  const updates: SessionNotification[] = [];
  const buffers = new Map<string, string>();
  const fsRequests: [string, string][] = [];
  const failing = new Set<string>();
  const stalled = new Map<string, () => void>();
  const permissions: RequestPermissionRequest[] = [];
  const answers: PermissionAnswer[] = [];
  const wake: (() => void)[] = [];
  const notifyAll = () => {
    for (const w of wake.splice(0)) w();
  };
  const nextAnswer = async (): Promise<PermissionAnswer> => {
    while (!answers.length) await new Promise<void>((resolve) => wake.push(resolve));
    return answers.shift()!;
  };
  const app = client({ name: "keen-test" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
      notifyAll();
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      notifyAll();
      const choice = await nextAnswer();
      return { outcome: choice === "cancelled" ? { outcome: "cancelled" } : { outcome: "selected", optionId: choice } };
    })
    .onRequest(methods.client.fs.readTextFile, async ({ params, signal }) => {
      fsRequests.push([methods.client.fs.readTextFile, params.path]);
      if (failing.has(params.path)) throw RequestError.resourceNotFound(params.path);
      const arrived = stalled.get(params.path);
      if (arrived) {
        arrived();
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        throw new Error("withdrawn");
      }
      return { content: buffers.get(params.path) ?? readFileSync(params.path, "utf8") };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      fsRequests.push([methods.client.fs.writeTextFile, params.path]);
      if (failing.has(params.path)) throw RequestError.resourceNotFound(params.path);
      buffers.set(params.path, params.content);
      return {};
    });
  // A tap on the client's side of the wire: every line it sends, as sent.
  const sent: string[] = [];
  let unsent = "";
  const tap = new Writable({
    write(chunk: Buffer, _encoding, done) {
      unsent += chunk.toString("utf8");
      const lines = unsent.split("\n");
      unsent = lines.pop()!;
      sent.push(...lines.filter(Boolean));
      child.stdin!.write(chunk, (error) => done(error ?? null));
    },
    final(done) {
      child.stdin!.end();
      done();
    },
  });
  const stream = ndJsonStream(
    Writable.toWeb(tap) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  );
  let closed = false;
  void exited.then(() => {
    closed = true;
    notifyAll();
  });

  return {
    child, updates, permissions, raw, sent, buffers, fsRequests, failing,
    stall: (path) => new Promise<void>((resolve) => stalled.set(path, resolve)),
    answer(...more) {
      answers.push(...more);
      notifyAll();
    },
    stderr: () => stderr,
    run: (op, capabilities = {}) =>
      app.connectWith(stream, async (ctx) => {
        const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: capabilities, clientInfo: { name: "keen-test", version: "1" } });
        return op(ctx, init);
      }).finally(() => child.stdin!.end()),
    async waitFor(match, from = 0) {
      for (;;) {
        const found = updates.slice(from).find(match);
        if (found) return found;
        if (closed) throw new Error(`keen acp exited before the expected update; stderr: ${stderr}`);
        await new Promise<void>((resolve) => wake.push(resolve));
      }
    },
    exited,
  };
}

/** The kinds of updates, in order, with runs of one kind collapsed (streaming and progress split them arbitrarily). */
export function updateKinds(updates: SessionNotification[]): string[] {
  const out: string[] = [];
  for (const { update } of updates) {
    const kind = update.sessionUpdate === "tool_call_update" ? `tool_call_update:${update.status ?? "-"}` : update.sessionUpdate;
    if (out.at(-1) === kind) continue;
    out.push(kind);
  }
  return out;
}

/** The text of the chunks of one kind, joined. */
export function chunkText(updates: SessionNotification[], kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk"): string {
  return updates.map((n) => n.update)
    .map((u) => (u.sessionUpdate === kind && u.content.type === "text" ? u.content.text : "")).join("");
}

/** A fresh sandbox (test/e2e/harness.ts) talking to `serverUrl`, with `config` in its config file, and `keen acp …` started in its workspace. */
export function openAcp(serverUrl: string, args: string[], config: Record<string, unknown> = {}) {
  const sb = makeSandbox(serverUrl, config);
  return { sb, acp: startAcp(args, sb.env, sb.workspace) };
}

/**
 * One `keen acp` shared by a file's tests, each in a session of its own, as an editor keeps one agent
 * process for many sessions (a process costs ~0.7 s of CPU to start), with the client `capabilities` given
 * (default: none). `get()` starts it on first use
 * (`serverUrl` is asked then, once the mock server is up);
 * `endsCleanly()` is a last test's check of how it exits; call `kill()` in an `after` hook, in
 * case a failed test left it running.
 */
export function sharedAcp(serverUrl: () => string, args: string[], capabilities?: ClientCapabilities) {
  type Shared = ReturnType<typeof openAcp> & { ctx: ClientContext; init: InitializeResponse; done: Promise<unknown> };
  let started: Promise<Shared> | undefined;
  let release = () => {};
  const get = () => (started ??= new Promise<Shared>((resolve, reject) => {
    const sb = makeSandbox(serverUrl());
    // Several tests' worth of turns: a longer budget than one test's before a hang is killed.
    const acp = startAcp(args, sb.env, sb.workspace, 180_000);
    const closed = new Promise<void>((r) => (release = r));
    const done = acp.run(async (ctx, init) => {
      resolve({ sb, acp, ctx, init, done });
      await closed;
    }, capabilities);
    done.catch(reject);
  }));
  return {
    get,
    /** Closes its stdin, as an editor does, and checks it exits 0 having printed JSON-RPC only and no stack trace. */
    endsCleanly: async () => {
      const { acp, done } = await get();
      release();
      await done;
      assert.equal((await acp.exited).code, 0, acp.stderr());
      assert.ok(acp.raw.every((line) => JSON.parse(line).jsonrpc === "2.0"), "stdout carries JSON-RPC only");
      assert.doesNotMatch(acp.stderr(), /\n\s+at /, "no stack traces");
    },
    kill: async () => {
      release();
      if (started) (await started.catch(() => undefined))?.acp.child.kill("SIGKILL");
    },
  };
}
