import type * as z from "zod";
import { COMMAND_ANSWERS, CommandSchema, PERMISSION_MODES, type PermissionMode } from "../../protocol/commands.js";
import { ERROR_CODES } from "../../protocol/responses.js";
import { gate, type Gate, type GateOptions } from "../../app/permissions/policy.js";
import { STRUCTURED_OUTPUT_TOOL } from "../../app/agent/structured-output.js";
import { createTools } from "../../app/tools/index.js";
import type { FileGuard } from "../../app/permissions/guard.js";
import type { CommandSandbox } from "../../app/sandbox/runtime.js";

/*
 * docs/PROTOCOL.md's command and permission tables, generated from the code
 * they describe: the command schemas (fields and their descriptions) with
 * COMMAND_ANSWERS beside them, the error codes, and the permission gate itself.
 */

const cell = (text: string) => text.replaceAll("|", "\\|");

/** The commands table: one row per command, in the schema's order. */
export function commandTable(): string {
  const rows = CommandSchema.options.map((option) => {
    const kind = option.shape.kind.value;
    const fields = Object.entries(option.shape as Record<string, z.ZodType>)
      .filter(([name]) => name !== "kind" && name !== "id")
      .map(([name, schema]) => fieldText(name, schema));
    return `| \`${kind}\` | ${cell(fields.join(", "))} | ${cell(COMMAND_ANSWERS[kind])} |`;
  });
  return ["| kind | fields | answered |", "| --- | --- | --- |", ...rows].join("\n");
}

/** The error-code table: one row per `error_code`, in the enum's order (protocol/responses.ts). */
export function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, meaning]) => `| \`${code}\` | ${cell(meaning)} |`);
  return ["| error_code | meaning |", "| --- | --- |", ...rows].join("\n");
}

function fieldText(name: string, schema: z.ZodType): string {
  const json = schema.toJSONSchema() as { enum?: string[] };
  const notes = [
    ...(json.enum ? [json.enum.map((v) => `\`${v}\``).join(", ")] : []),
    ...(schema.description ? [schema.description] : []),
    ...(schema.safeParse(undefined).success ? ["optional"] : []),
  ];
  return notes.length ? `\`${name}\` (${notes.join("; ")})` : `\`${name}\``;
}

/** A column of the permission table: the tools its header names, as the gate sees them (they must all agree). */
export interface ToolColumn {
  header: string;
  tools: { name: string; kind?: GateOptions["kind"]; sandboxed?: boolean }[];
}

const MCP_TOOL = "mcp__server__tool";
// The built-in tools as they declare themselves with the sandbox on; only their kinds are read (none runs, so no guard or sandbox is needed).
const BUILT_IN = createTools({ cwd: "/", workspace: "/", guard: {} as FileGuard, env: {}, sandbox: {} as CommandSandbox })
  .map((t) => ({ name: t.definition.name, kind: t.kind, sandboxed: t.sandboxed }));
const ofKinds = (...kinds: string[]) => BUILT_IN.filter((t) => t.kind && kinds.includes(t.kind));
const listed = (tools: { name: string }[]) => tools.map((t) => `\`${t.name}\``).join(", ");
const READS = [...ofKinds("read", "search"), { name: STRUCTURED_OUTPUT_TOOL, kind: "read" as const }];
export const TOOL_COLUMNS: ToolColumn[] = [
  {
    header: `reads (${listed(READS)}; MCP tools that declare \`readOnlyHint\`)`,
    tools: [...READS, { name: MCP_TOOL, kind: "read" }],
  },
  { header: listed(ofKinds("edit")), tools: ofKinds("edit") },
  { header: listed(ofKinds("exec")), tools: ofKinds("exec") },
  { header: "any other tool (MCP tools without `readOnlyHint`)", tools: [{ name: MCP_TOOL, kind: "other" }] },
];

const WORD: Record<Gate, string> = { allow: "run", ask: "ask", refuse: "refused" };

/** What the gate does with a column's tool in a mode, with bash in the sandbox (`confined`) or not. */
export function modeCell(mode: PermissionMode, column: ToolColumn, confined: boolean): string {
  const words = new Set(column.tools.map((tool) => WORD[gate(mode, undefined, { bashConfined: confined, kind: tool.kind, sandboxed: tool.sandboxed })]));
  if (words.size !== 1) throw new Error(`the tools of column "${column.header}" are not treated alike in ${mode} mode: split the column`);
  return [...words][0]!;
}

/** The permission table: modes from the widest down; a cell that differs when bash runs sandboxed says both. */
export function modeTable(): string {
  const rows = PERMISSION_MODES.map((mode) => {
    const cells = TOOL_COLUMNS.map((column) => {
      const plain = modeCell(mode, column, false);
      const confined = modeCell(mode, column, true);
      return plain === confined ? plain : `${plain}; sandboxed: ${confined}`;
    });
    return `| \`${mode}\` | ${cells.join(" | ")} |`;
  });
  return [`| mode | ${TOOL_COLUMNS.map((c) => c.header).join(" | ")} |`, `| --- |${" --- |".repeat(TOOL_COLUMNS.length)}`, ...rows].join("\n");
}
