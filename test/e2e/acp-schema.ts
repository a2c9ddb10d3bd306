import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/*
 * Checks JSON-RPC traffic against the JSON Schema that ships with the ACP SDK
 * Keen pins (schema/v1/schema.json: the stable protocol its default import
 * speaks). Each definition there names its method (`x-method`); a request's
 * params are checked against `<Name>Request`, a notification's against
 * `<Name>Notification`, a result against the `<Name>Response` of the method
 * its request named, and an error against `Error`.
 */

const SCHEMA_PATH = fileURLToPath(new URL("../../../schema/v1/schema.json", import.meta.resolve("@agentclientprotocol/sdk")));

interface Definition {
  "x-method"?: string;
}

type Kind = "Request" | "Response" | "Notification";

/** One line of the wire: who wrote it, and the line. */
export interface WireLine {
  from: "client" | "agent";
  line: string;
}

/** The SDK's schema, compiled once per process. */
export function loadAcpSchema() {
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8")) as { $defs: Record<string, Definition> };
  // The schema's own extensions (x-method, x-side) and integer formats (int64, uint16) are not validation keywords.
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(schema, "acp");
  const byMethod = new Map<string, string>();
  for (const [name, def] of Object.entries(schema.$defs)) {
    const kind = (["Request", "Response", "Notification"] as const).find((k) => name.endsWith(k));
    if (def["x-method"] && kind) byMethod.set(`${kind} ${def["x-method"]}`, name);
  }
  const compiled = new Map<string, ValidateFunction>();
  const validator = (name: string): ValidateFunction => {
    let found = compiled.get(name);
    if (!found) {
      found = ajv.getSchema(`acp#/$defs/${name}`);
      if (!found) throw new Error(`the schema has no definition ${name}`);
      compiled.set(name, found);
    }
    return found;
  };
  const check = (kind: Kind, method: string, value: unknown): string | undefined => {
    const name = byMethod.get(`${kind} ${method}`);
    if (!name) return `no ${kind} is defined for method ${method}`;
    const validate = validator(name);
    return validate(value) ? undefined : `${name}: ${ajv.errorsText(validate.errors, { dataVar: "" })}`;
  };

  return {
    /** The definitions a method has, e.g. ("Request", "session/prompt") → "PromptRequest". */
    definitionOf: (kind: Kind, method: string) => byMethod.get(`${kind} ${method}`),
    /**
     * Every problem in a conversation, as `<from> <line>: <what>`; empty when every message
     * fits. A response is matched to the other side's request with its id (one connection's lines).
     */
    problems(lines: WireLine[]): string[] {
      const out: string[] = [];
      // Each side's requests by id, first: the two sides' lines are recorded apart, so a response may come first.
      const asked = { client: new Map<unknown, string>(), agent: new Map<unknown, string>() };
      for (const { from, line } of lines) {
        try {
          const message = JSON.parse(line) as Record<string, unknown>;
          if (typeof message.method === "string" && "id" in message) asked[from].set(message.id, message.method);
        } catch {
          // Reported below.
        }
      }
      for (const { from, line } of lines) {
        const problem = (what: string) => out.push(`${from} ${line.slice(0, 300)}: ${what}`);
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line) as Record<string, unknown>;
        } catch {
          problem("not JSON");
          continue;
        }
        if (message.jsonrpc !== "2.0") problem("jsonrpc is not \"2.0\"");
        const method = typeof message.method === "string" ? message.method : undefined;
        if (method && "id" in message) {
          const found = check("Request", method, message.params);
          if (found) problem(found);
        } else if (method) {
          const found = check("Notification", method, message.params);
          if (found) problem(found);
        } else if ("error" in message) {
          const validate = validator("Error");
          if (!validate(message.error)) problem(`Error: ${ajv.errorsText(validate.errors, { dataVar: "" })}`);
        } else if ("result" in message) {
          const other = from === "client" ? "agent" : "client";
          const requested = asked[other].get(message.id);
          if (!requested) problem("a result for no request");
          else {
            const found = check("Response", requested, message.result);
            if (found) problem(found);
          }
        } else problem("neither a request, a notification nor a response");
      }
      return out;
    },
  };
}
