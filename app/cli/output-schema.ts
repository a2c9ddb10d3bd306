import { readFileSync } from "node:fs";
import type { SchemaCheck } from "../agent/structured-output.js";
import { UsageError } from "./errors.js";

/** A loaded `--output-schema`: the schema and a real JSON Schema validator for it. */
export interface LoadedSchema {
  schema: Record<string, unknown>;
  check: SchemaCheck;
}

/** Reads and compiles the schema file with ajv; any problem is a UsageError (exit 2). */
export async function loadOutputSchema(file: string): Promise<LoadedSchema> {
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new UsageError(`--output-schema ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) {
    throw new UsageError(`--output-schema ${file}: a JSON Schema must be an object`);
  }
  // Bundled, the CJS module's named export may only be reachable through `default`.
  const mod = await import("ajv");
  const Ajv = (mod.Ajv ?? (mod.default as unknown as { Ajv: typeof mod.Ajv }).Ajv) as typeof mod.Ajv;
  const ajv = new Ajv({ allErrors: true, strict: false });
  let validate: ReturnType<typeof ajv.compile>;
  try {
    const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
    validate = ajv.compile(rest);
  } catch (error) {
    throw new UsageError(`--output-schema ${file}: not a valid JSON Schema (${error instanceof Error ? error.message : String(error)})`);
  }
  const { $schema: _s, ...forModel } = schema as Record<string, unknown>;
  return {
    schema: forModel,
    check(value) {
      if (validate(value)) return undefined;
      return ajv.errorsText(validate.errors, { dataVar: "value" });
    },
  };
}
