// Loaded by scripts/tool-schemas.mjs (through tsx) at build time: every tool module, then their inputs' JSON Schemas.
import "../app/tools/index.js";
import { convertToolSchemas } from "../app/tools/define.js";

export function builtToolSchemas(): Record<string, Record<string, unknown>> {
  const schemas = convertToolSchemas();
  if (Object.keys(schemas).length === 0) throw new Error("no tool input schemas were declared");
  return schemas;
}
