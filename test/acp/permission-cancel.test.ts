import { test } from "node:test";
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type RequestPermissionRequest } from "@agentclientprotocol/sdk";
import type { Command } from "../../protocol/commands.js";
import { serveAcp } from "../../app/acp/server.js";
import { draft, FakeEngine } from "../fakes/fake-engine.js";

/* `keen acp` in-process, with a client that never answers a permission request: what a cancel does to Keen's wait. */

/** A turn that asks permission for one call and ends only when interrupted, as the engine's does. */
class AskingEngine extends FakeEngine {
  private turn?: Command;
  override send(command: Command): void {
    if (command.kind === "prompt") {
      this.sent.push(command);
      this.turn = command;
      queueMicrotask(() => {
        this.emit(draft.toolUse("c1", "bash", { command: "ls" }));
        this.emit(draft.permission("perm-1", "c1", "bash", { command: "ls" }));
      });
      return;
    }
    super.send(command);
    const turn = this.turn;
    if (command.kind === "interrupt" && turn) {
      this.turn = undefined;
      queueMicrotask(() => {
        this.emit(draft.result({ status: "interrupted" }));
        this.emit({ kind: "response", id: turn.id, command: "prompt", ok: true } as never);
      });
    }
  }
}

test("session/cancel ends Keen's wait for a permission answer at once and quietly: the request is withdrawn, the prompt answers cancelled, nothing is logged", async () => {
  const engine = new AskingEngine();
  const logs: string[] = [];
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const server = await serveAcp({
    host: {
      open: async ({ cwd }) => ({ client: engine, id: "s1", cwd, model: "anthropic/claude-test", mode: "ask", offers: { compact: true, undo: true }, close: async () => {} }),
      list: async () => [],
    },
    input: toAgent.readable, output: toClient.writable, version: "test", log: (line) => logs.push(line),
  });

  const asked: RequestPermissionRequest[] = [];
  let withdrawn!: () => void;
  const wasWithdrawn = new Promise<void>((resolve) => (withdrawn = resolve));
  let arrived!: () => void;
  const wasAsked = new Promise<void>((resolve) => (arrived = resolve));
  const editor = client({ name: "silent-editor" })
    .onNotification(methods.client.session.update, () => {})
    .onRequest(methods.client.session.requestPermission, ({ params, signal }) => {
      asked.push(params);
      arrived();
      signal.addEventListener("abort", () => withdrawn(), { once: true });
      // An editor that never replies, not even with the `cancelled` outcome.
      return new Promise<never>(() => {});
    });

  const stopReason = await editor.connectWith(ndJsonStream(toAgent.writable, toClient.readable), async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: "silent-editor", version: "1" } });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: tmpdir(), mcpServers: [] });
    const pending = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "list the files" }] });
    await wasAsked;
    await ctx.notify(methods.agent.session.cancel, { sessionId });
    await wasWithdrawn;
    return (await pending).stopReason;
  });
  server.stop();
  await server.done;

  assert.equal(stopReason, "cancelled");
  assert.equal(asked.length, 1);
  // The engine withdrew the request itself: Keen sends it no answer of its own.
  assert.deepEqual(engine.commands("permission-response"), []);
  assert.equal(engine.commands("interrupt").length, 1);
  assert.deepEqual(logs, [], "a withdrawn request is not a failure");
});
