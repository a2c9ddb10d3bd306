import * as z from "zod";
import { PublicEventSchema } from "./events.js";
import { publishable } from "./json-schema.js";
import { responseDataDefs } from "./responses.js";

/** One JSON line as written: a public event plus its position in the stream. */
export const JsonlLineSchema = z.intersection(PublicEventSchema, z.object({ seq: z.number().int().min(0) }));

/** The JSON Schema published for clients (`keen protocol schema`), with each command's response `data` in `$defs`. */
export function protocolJsonSchema(): Record<string, unknown> {
  const line = publishable(z.toJSONSchema(JsonlLineSchema)) as Record<string, unknown>;
  return {
    $id: "https://keen.dev/schema/protocol-v1.json",
    title: "Keen JSON-lines protocol, one line",
    ...line,
    // Not referenced by the line schema (a response's `data` depends on its `command`): published for clients to pick by command.
    $defs: { ...(line.$defs as Record<string, unknown> | undefined), ...publishable(responseDataDefs()) },
  };
}
