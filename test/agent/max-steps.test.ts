import { test } from "node:test";
import assert from "node:assert/strict";
import { selectMaxStepsPrompt } from "../../app/agent/max-steps.js";

const pick = (step: number, maxSteps: number, headless: boolean) => selectMaxStepsPrompt({ step, maxSteps, headless })?.name;

test("mid-loop: no prompt", () => {
  assert.equal(pick(3, 10, true), undefined);
  assert.equal(pick(3, 10, false), undefined);
});

test("interactive last step: the gentler summary prompt", () => {
  const prompt = selectMaxStepsPrompt({ step: 10, maxSteps: 10, headless: false });
  assert.equal(prompt?.name, "max-steps-interactive");
  assert.match(prompt!.text, /summary/);
});

test("headless last step: the committed-answer prompt, not a summary", () => {
  const prompt = selectMaxStepsPrompt({ step: 10, maxSteps: 10, headless: true });
  assert.equal(prompt?.name, "max-steps-final");
  assert.match(prompt!.text, /best guess/);
  assert.doesNotMatch(prompt!.text, /recommendations for what should be done next/i);
});

test("headless pre-warning one step before the limit, with the steps remaining substituted", () => {
  const prompt = selectMaxStepsPrompt({ step: 9, maxSteps: 10, headless: true });
  assert.equal(prompt?.name, "max-steps-prewarn");
  assert.match(prompt!.text, /2 steps remain/);
  assert.doesNotMatch(prompt!.text, /\{STEPS_REMAINING\}/);
});

test("no interactive pre-warning", () => {
  assert.equal(pick(9, 10, false), undefined);
});

test("over the limit: the final prompt, never the pre-warning", () => {
  assert.equal(pick(11, 10, true), "max-steps-final");
  assert.equal(pick(12, 10, false), "max-steps-interactive");
});

test("infinite budget: never a prompt", () => {
  for (const step of [1, 2, 100]) {
    assert.equal(pick(step, Infinity, true), undefined);
    assert.equal(pick(step, Infinity, false), undefined);
  }
});

test("maxSteps 1: the final prompt on the first step, no pre-warning", () => {
  assert.equal(pick(1, 1, true), "max-steps-final");
  assert.equal(pick(0, 1, true), undefined);
});

test("maxSteps 2: pre-warning on step 1, final on step 2", () => {
  assert.equal(pick(1, 2, true), "max-steps-prewarn");
  assert.equal(pick(2, 2, true), "max-steps-final");
});

test("structured output: the final prompt asks for the structured_output call", () => {
  const prompt = selectMaxStepsPrompt({ step: 3, maxSteps: 3, headless: true, structured: true });
  assert.match(prompt!.text, /structured_output/);
});
