import { test } from "node:test";
import assert from "node:assert/strict";
import { MemoryFilter } from "../../app/agent/memory-filter.js";

function run(chunks: string[]) {
  const filter = new MemoryFilter();
  let visible = "";
  for (const c of chunks) visible += filter.push(c);
  visible += filter.flush();
  return { visible, memory: filter.memory() };
}

function everySplit(text: string, check: (chunks: string[]) => void) {
  for (let i = 0; i <= text.length; i++) {
    for (let j = i; j <= text.length; j++) check([text.slice(0, i), text.slice(i, j), text.slice(j)]);
  }
  check([...text]);
}

test("hides a memory block split at every pair of boundaries and into single characters", () => {
  const raw = "Done: fixed the bug.\n<keen_memory>\n- edited a.ts\n</keen_memory>";
  everySplit(raw, (chunks) => {
    const out = run(chunks);
    assert.equal(out.visible, "Done: fixed the bug.\n");
    assert.equal(out.memory, "- edited a.ts");
    assert.equal(chunks.join(""), raw);
  });
});

test("text after the block stays visible", () => {
  everySplit("a<keen_memory>m</keen_memory>b", (chunks) => assert.equal(run(chunks).visible, "ab"));
});

test("an unterminated block hides everything from its open tag on", () => {
  everySplit("answer <keen_memory>- half written", (chunks) => {
    const out = run(chunks);
    assert.equal(out.visible, "answer ");
    assert.equal(out.memory, "- half written");
  });
});

test("text that merely looks like a tag stays visible", () => {
  for (const raw of ["x <keen_mem y", "a < b and <keen_memoryX>", "ends with <keen_mem"]) {
    everySplit(raw, (chunks) => {
      const out = run(chunks);
      assert.equal(out.visible, raw);
      assert.equal(out.memory, undefined);
    });
  }
});

test("releases everything except a possible tag start at once", () => {
  const filter = new MemoryFilter();
  assert.equal(filter.push("hello <kee"), "hello ");
  assert.equal(filter.push("p going"), "<keep going");
  assert.equal(filter.push(" <"), " ");
  assert.equal(filter.flush(), "<");
});
