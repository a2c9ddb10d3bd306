/**
 * A generated JSON Schema as Keen publishes it: zod writes a union of
 * primitives (a command id: string or number) as `type: ["string", "number"]`,
 * which strict validators refuse by default (ajv's `strictTypes`); the same
 * union as `anyOf` means the same and every validator takes it.
 */
export function publishable<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(publishable) as T;
  if (!schema || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "type" && Array.isArray(value)) out.anyOf = value.map((type) => ({ type }));
    else out[key] = key === "const" || key === "enum" || key === "default" ? value : publishable(value);
  }
  return out as T;
}
