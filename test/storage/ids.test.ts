import { test } from "node:test";
import assert from "node:assert/strict";
import { newEventKey, newSessionId } from "../../storage/ids.js";

test("session ids are RFC 9562 UUID v7 strings", () => {
  const id = newSessionId();
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const now = Date.now();
  const stamp = parseInt(newSessionId(now).replaceAll("-", "").slice(0, 12), 16);
  assert.equal(stamp, now);
  assert.notEqual(newSessionId(now), newSessionId(now));
});

test("ids made in later milliseconds sort after earlier ones", () => {
  const base = Date.now();
  const ids = Array.from({ length: 200 }, (_, i) => newSessionId(base + i * 7));
  assert.deepEqual([...ids].sort(), ids);
  // Across a hex-digit carry as well.
  assert.ok(newSessionId(0xffffffff) < newSessionId(0x100000000));
});

test("event keys sort in sequence order", () => {
  assert.equal(newEventKey(42), "e:000000000042");
  const keys = [0, 9, 10, 99, 100, 123456].map(newEventKey);
  assert.deepEqual([...keys].sort(), keys);
});
