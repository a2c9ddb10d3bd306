import assert from "node:assert/strict";
import { test } from "node:test";
import type { EventDraft } from "../../protocol/events.js";
import { createPermissionGate } from "../../app/agent/permission-gate.js";
import { webGate } from "../../app/permissions/policy.js";

test("web_fetch's host decision by mode: ask and accept-edits ask, auto fetches, read-only refuses; rules hold, deny wins", () => {
  assert.deepEqual((["auto", "accept-edits", "ask", "read-only"] as const).map((m) => webGate(m)), ["allow", "ask", "ask", "refuse"]);
  assert.equal(webGate("ask", "allow"), "allow");
  assert.equal(webGate("auto", "deny"), "refuse");
  assert.equal(webGate("read-only", "allow"), "refuse", "read-only is never widened by a rule");
});

test("a web: host request goes by webGate; its allow-always rule does not open the host to sandboxed commands (network:)", async () => {
  const events: EventDraft[] = [];
  let gateRef: ReturnType<typeof createPermissionGate> | undefined;
  const emit = async (event: EventDraft) => {
    events.push(event);
    if (event.kind === "permission-request") {
      queueMicrotask(() => gateRef!.answer({ type: "permission-response", request_id: event.request_id, decision: "allow-always" } as never));
    }
  };
  const web = { tool: "web:example.com", input: { host: "example.com" }, summary: "fetch", callId: "c1", network: true, kind: "network" as const };
  const sandboxed = { tool: "network:example.com", input: { host: "example.com" }, summary: "connect", callId: "c2", network: true };
  const gate = (gateRef = createPermissionGate({ mode: "ask", interactive: true, emit, newId: () => `id${events.length}` }));
  assert.deepEqual(await gate.request(web), { allow: true });
  assert.deepEqual(await gate.request(web), { allow: true });
  assert.equal(events.filter((e) => e.kind === "permission-request").length, 1, "asked once for the host");
  await gate.request(sandboxed);
  assert.equal(events.filter((e) => e.kind === "permission-request").length, 2, "the sandbox's rule is its own");

  const auto = createPermissionGate({ mode: "auto", interactive: false, emit: async () => {}, newId: () => "x" });
  assert.deepEqual(await auto.request({ ...web, tool: "web:other.org" }), { allow: true });
  const readOnly = createPermissionGate({ mode: "read-only", interactive: true, emit: async () => {}, newId: () => "x" });
  assert.deepEqual(await readOnly.request(web), {
    allow: false,
    reason: "example.com was not fetched: the session is in read-only mode, which fetches only from hosts the config allows; add it to web.allowedDomains in the user's Keen config to allow it",
  });
  const oneShot = createPermissionGate({ mode: "ask", interactive: false, emit: async () => {}, newId: () => "x" });
  assert.match((await oneShot.request(web) as { reason: string }).reason, /^example\.com was not fetched: this one-shot run has nobody to ask; add it to web\.allowedDomains/);
});
