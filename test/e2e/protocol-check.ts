import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import Ajv2020Module from "ajv/dist/2020.js";
import { JsonlLineSchema } from "../../protocol/jsonl.js";
import { KEEN_BIN } from "./harness.js";

type Line = Record<string, any>;

// ajv is CommonJS: under NodeNext its class arrives as the default export's `default`.
const Ajv2020 = ((Ajv2020Module as any).default ?? Ajv2020Module) as typeof Ajv2020Module.default;
let validateLine: ReturnType<InstanceType<typeof Ajv2020>["compile"]> | undefined;

/** The schema `keen protocol schema` prints: by default from a spawned Keen (the e2e files check what the real process publishes). */
let schemaSource = (): Record<string, any> => {
  const out = spawnSync(KEEN_BIN, ["protocol", "schema"], { encoding: "utf8" });
  assert.equal(out.status, 0, `keen protocol schema failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
};

/**
 * A unit test, which starts no Keen, gives the schema from the function `keen protocol schema` prints
 * (protocol/jsonl.ts's protocolJsonSchema): then checking a stream spawns nothing.
 */
export function useSchemaFrom(source: () => Record<string, any>): void {
  schemaSource = source;
  validateLine = undefined;
}

/** The schema, compiled once per test process. */
function schemaValidator() {
  if (validateLine) return validateLine;
  const schema = schemaSource();
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema", "the schema generator changed drafts: pick the matching Ajv");
  validateLine = new Ajv2020({ strict: true, allErrors: true }).compile(schema);
  return validateLine;
}

/** Every line validates against the published JSON Schema and against the zod definition. */
export function assertValidLines(lines: Line[]): void {
  const validate = schemaValidator();
  for (const line of lines) {
    assert.ok(validate(line), `line fails the JSON Schema: ${JSON.stringify(line)}\n${JSON.stringify(validate.errors?.slice(0, 3))}`);
    const parsed = JsonlLineSchema.safeParse(line);
    assert.ok(parsed.success, `line fails JsonlLineSchema: ${JSON.stringify(line)}\n${parsed.error?.message}`);
  }
}

const DELTA_KINDS = ["text-delta", "thinking-start", "thinking-delta", "thinking-end", "content-end", "tool-update", "tool-start"];

/** What a stream is expected to be. */
export interface StreamExpectation {
  /** `--stream-deltas` was given: delta kinds allowed, complete entries checked against them. */
  deltas: boolean;
}

/**
 * The ordering invariants of docs/PROTOCOL.md, checked on one whole output
 * stream (live run). Also validates every line. Returns the `result` line.
 */
export function assertProtocolStream(lines: Line[], expect: StreamExpectation): Line {
  assertValidLines(lines);
  assert.ok(lines.length >= 2, "a stream has at least session-start and result");
  assert.equal(lines[0]!.kind, "session-start", "session-start is the first line");
  assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i), "seq is contiguous from 0");
  assert.equal(lines.filter((l) => l.kind === "result").length, 1, "exactly one result line");
  const result = lines.at(-1)!;
  assert.equal(result.kind, "result", "result is the last line");
  const id = lines[0]!.conversation_id;
  for (const l of lines) assert.equal(l.conversation_id, id, "one conversation_id per stream");
  assert.equal(result.session_id, id);
  if (!expect.deltas) {
    assert.deepEqual(lines.filter((l) => DELTA_KINDS.includes(l.kind)), [], "no delta kinds without --stream-deltas");
  }

  let attempt = 1;
  let openText: string | undefined;
  let openThinking: string | undefined;
  let closedTexts: string[] = [];
  let closedThinkings: string[] = [];
  const toolUses = new Map<string, Line>();
  const answered = new Set<string>();
  let runningTool: string | undefined;
  const unclosed = () => `text block left open: ${JSON.stringify(openText)}`;

  for (const l of lines) {
    if (l.attempt !== undefined && l.kind !== "retry") assert.equal(l.attempt, attempt, `${l.kind} seq ${l.seq} carries attempt ${attempt}`);
    switch (l.kind) {
      case "retry":
        assert.equal(l.attempt, attempt + 1, "retry announces the next attempt");
        attempt = l.attempt;
        // Everything the failed attempt streamed is void.
        openText = openThinking = undefined;
        closedTexts = [];
        closedThinkings = [];
        break;
      case "text-delta":
        assert.equal(openThinking, undefined, "text inside an open thinking block");
        openText = (openText ?? "") + l.delta;
        break;
      case "content-end":
        assert.notEqual(openText, undefined, "content-end without a text block");
        closedTexts.push(openText!);
        openText = undefined;
        break;
      case "thinking-start":
        assert.equal(openThinking, undefined, "nested thinking-start");
        assert.equal(openText, undefined, unclosed());
        openThinking = "";
        break;
      case "thinking-delta":
        assert.notEqual(openThinking, undefined, "thinking-delta outside thinking-start/end");
        openThinking += l.delta;
        break;
      case "thinking-end":
        assert.notEqual(openThinking, undefined, "thinking-end without thinking-start");
        if (openThinking) closedThinkings.push(openThinking);
        openThinking = undefined;
        break;
      case "text":
        if (l.role === "user" || !expect.deltas) break;
        assert.equal(openText, undefined, unclosed());
        assert.equal(l.content, closedTexts.shift(), "a complete text equals the concatenation of its block's deltas");
        break;
      case "thinking":
        if (!expect.deltas) break;
        assert.equal(l.content, closedThinkings.shift(), "a complete thinking equals the concatenation of its deltas");
        break;
      case "tool-use":
        assert.equal(openText, undefined, unclosed());
        assert.ok(!toolUses.has(l.tool_call_id), `duplicate tool-use ${l.tool_call_id}`);
        toolUses.set(l.tool_call_id, l);
        break;
      case "tool-start":
      case "tool-update":
      case "tool-result": {
        const use = toolUses.get(l.tool_call_id);
        assert.ok(use, `${l.kind} ${l.tool_call_id} before its tool-use`);
        assert.equal(l.tool_name, use.tool_name);
        assert.ok(!answered.has(l.tool_call_id), `${l.kind} after the tool-result of ${l.tool_call_id}`);
        // Calls run one after another: updates of one call never interleave with another.
        assert.ok(runningTool === undefined || runningTool === l.tool_call_id, "tool calls interleave");
        runningTool = l.kind === "tool-result" ? undefined : l.tool_call_id;
        if (l.kind === "tool-result") answered.add(l.tool_call_id);
        break;
      }
    }
    if (["text", "thinking", "memory", "tool-use"].includes(l.kind) && l.role === "assistant") {
      assert.equal(openThinking, undefined, "complete entry inside an open thinking block");
    }
    if (l.kind === "tool-use" || l.kind === "tool-result" || l.kind === "result") {
      if (l.kind !== "result" || result.status === "success") {
        assert.deepEqual(closedTexts, [], "every streamed text block got its complete entry");
        assert.deepEqual(closedThinkings, [], "every streamed thinking block got its complete entry");
      }
    }
  }
  if (result.status === "success") {
    assert.equal(openText, undefined, unclosed());
    for (const id of toolUses.keys()) assert.ok(answered.has(id), `tool-use ${id} has a tool-result`);
  }
  return result;
}

/** Concatenated `delta`s of one kind, for one attempt (default: all). */
export function joinDeltas(lines: Line[], kind: string, attempt?: number): string {
  return lines.filter((l) => l.kind === kind && (attempt === undefined || l.attempt === attempt)).map((l) => l.delta).join("");
}

const REPEATED = ["text-delta", "thinking-delta", "tool-update"];

/** Kinds in order, for whole-sequence comparisons; runs of deltas or tool updates collapse to one (their count varies). */
export function kindSequence(lines: Line[]): string[] {
  const out: string[] = [];
  for (const l of lines) if (!(REPEATED.includes(l.kind) && l.kind === out.at(-1))) out.push(l.kind);
  return out;
}
