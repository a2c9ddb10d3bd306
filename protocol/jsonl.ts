import * as z from "zod";
import { PublicEventSchema } from "./events.js";
import { publishable } from "./json-schema.js";

/** One JSON line as written: a public event plus its position in the stream. */
export const JsonlLineSchema = z.intersection(PublicEventSchema, z.object({ seq: z.number().int().min(0) }));

/** The JSON Schema published for clients (`keen protocol schema`). */
export function protocolJsonSchema(): Record<string, unknown> {
  return {
    $id: "https://keen.dev/schema/protocol-v1.json",
    title: "Keen JSON-lines protocol, one line",
    ...publishable(z.toJSONSchema(JsonlLineSchema)),
  };
}
