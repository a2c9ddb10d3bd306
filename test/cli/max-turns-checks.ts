import assert from "node:assert/strict";

// What the model is sent on each step of a --max-turns run, for test/cli/max-turns.test.ts and
// test/e2e/max-turns.test.ts.

export type Vendor = "anthropic" | "openai";

export function toolChoiceOf(vendor: Vendor, body: any): string | undefined {
  if (vendor === "anthropic") return body.tool_choice?.type;
  return body.tool_choice;
}

/** All user-visible text the request's last message carries, to find injected prompts in. */
export function lastUserText(body: any): string {
  const last = body.messages.at(-1);
  if (typeof last.content === "string") return last.content;
  return last.content.map((b: any) => b.text ?? "").join("\n");
}

/** Every request of an n-step run: tools kept, the pre-warning on step n-1, the final prompt and tool_choice none on step n only. */
export function assertBudget(vendor: Vendor, bodies: any[], n: number) {
  assert.equal(bodies.length, n);
  bodies.forEach((body, i) => {
    const step = i + 1;
    assert.ok(body.tools?.length, `step ${step} keeps the tool definitions`);
    assert.equal(toolChoiceOf(vendor, body) === "none", step === n, `tool_choice none on step ${step} of ${n}`);
    const text = lastUserText(body);
    assert.equal(/Step budget: 2 steps remain/.test(text), n >= 2 && step === n - 1, `pre-warning on step ${step} of ${n}`);
    assert.equal(/FINAL STEP/.test(text), step === n, `final prompt on step ${step} of ${n}`);
  });
}
