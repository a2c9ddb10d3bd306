import assert from "node:assert/strict";

// The memory block the mock model writes, and what must never show, for test/cli/memory.test.ts
// and test/e2e/memory.test.ts.

export const VISIBLE = "It printed found.\n";
export const INNER = "- MEMO-7f3: `echo found` works in this workspace";
export const RAW = `${VISIBLE}<keen_memory>\n${INNER}\n</keen_memory>`;
/** Both tags split inside, at odd places. */
export const SPLIT_DELTAS = ["It printed ", "found.\n<", "keen_m", "emory>\n- MEMO", "-7f3: `echo found` works in this workspace\n</keen_memo", "ry", ">"];
/** What the system prompt says about the block. */
export const BLOCK_PARTS = [/<keen_memory>[\s\S]*<\/keen_memory>/, /when this turn used one or more tools/i, /never paste raw tool output/i, /no such block/i];

/** The text of a vendor message, whether `content` is a string or blocks. */
export function textOf(message: any): string {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((b: any) => (b.type === "text" ? b.text : "")).join("");
}

export function assertHidden(output: string, where: string) {
  assert.doesNotMatch(output, /keen_mem/, `${where} shows a memory tag`);
  assert.ok(!output.includes("MEMO-7f3"), `${where} shows the memory content`);
}
