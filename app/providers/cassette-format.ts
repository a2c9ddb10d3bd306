import * as z from "zod";
import { PROVIDER_KINDS } from "./registry.js";

/**
 * The cassette format (docs/CASSETTES.md): JSON lines, a header first, then
 * for each model request a `request` line, a `response` line once headers
 * arrived, `chunk` lines as the body arrived and an `end` line. Lines of one
 * request share `n` (1-based, in the order requests were sent), so a reader
 * never depends on lines of two requests not interleaving.
 */
export const CASSETTE_VERSION = 1;

/** An error as recorded: enough to rebuild what the SDK and Keen's classifier look at (message, code, causes). */
export interface RecordedError {
  name?: string;
  message: string;
  code?: string;
  cause?: RecordedError;
}

const RecordedErrorSchema: z.ZodType<RecordedError> = z.lazy(() =>
  z.object({ name: z.string().optional(), message: z.string(), code: z.string().optional(), cause: RecordedErrorSchema.optional() }),
);

const Kind = z.enum(PROVIDER_KINDS);
const Headers = z.record(z.string(), z.string());
const N = z.number().int().min(1);
const Ms = z.number().min(0);

/** First line: what wrote the cassette and the session's first model. */
export const CassetteHeaderSchema = z.object({
  type: z.literal("cassette"),
  version: z.number().int().min(1),
  /** The Keen version that recorded it. */
  keen: z.string(),
  /** ISO 8601 time of the first request. */
  created: z.string(),
  /** Provider id (a config name such as `anthropic` or `ollama`) and model of the first request. */
  provider: z.string(),
  model: z.string(),
  /** The wire format of the first request. */
  kind: Kind,
});

/** A request as Keen sent it, secrets redacted and auth headers removed. */
export const RequestLineSchema = z.object({
  type: z.literal("request"), n: N, kind: Kind, method: z.string(), url: z.string(), headers: Headers, body: z.unknown(),
});
/** Status and the headers that matter, `ms` after the request was sent. */
export const ResponseLineSchema = z.object({ type: z.literal("response"), n: N, ms: Ms, status: z.number().int(), headers: Headers });
/** A piece of the body as it arrived (UTF-8 text), `ms` after the request was sent. */
export const ChunkLineSchema = z.object({ type: z.literal("chunk"), n: N, ms: Ms, data: z.string() });
/** The body (or, with no response line, the request) ended: cleanly, with an error, or aborted by Keen. */
export const EndLineSchema = z.object({ type: z.literal("end"), n: N, ms: Ms, error: RecordedErrorSchema.optional(), aborted: z.boolean().optional() });

const LineSchema = z.discriminatedUnion("type", [CassetteHeaderSchema, RequestLineSchema, ResponseLineSchema, ChunkLineSchema, EndLineSchema]);

export type CassetteHeader = z.infer<typeof CassetteHeaderSchema>;
export type RequestLine = z.infer<typeof RequestLineSchema>;
export type ResponseLine = z.infer<typeof ResponseLineSchema>;
export type ChunkLine = z.infer<typeof ChunkLineSchema>;
export type EndLine = z.infer<typeof EndLineSchema>;
/** Any line but the header, without its `n` (the writer stamps it). */
export type InteractionLine = Omit<RequestLine, "n"> | Omit<ResponseLine, "n"> | Omit<ChunkLine, "n"> | Omit<EndLine, "n">;

/** One recorded request and what came back. `end` is absent when the recording process died mid-stream. */
export interface Interaction {
  request: RequestLine;
  response?: ResponseLine;
  chunks: ChunkLine[];
  end?: EndLine;
}

/** A parsed cassette. */
export interface Cassette {
  header: CassetteHeader;
  interactions: Interaction[];
}

/** A cassette that cannot be read: the message names the file and the line. */
export class CassetteError extends Error {}

const KNOWN_TYPES = new Set(["cassette", "request", "response", "chunk", "end"]);

/**
 * Parses a cassette. Lines of an unknown `type` and unknown fields are
 * ignored (a newer Keen of the same version may add them); a newer version,
 * a malformed line or a line for a request never seen is a CassetteError.
 */
export function parseCassette(text: string, source: string): Cassette {
  const lines = text.split("\n");
  let header: CassetteHeader | undefined;
  const byN = new Map<number, Interaction>();
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === "") continue;
    const where = `${source}, line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new CassetteError(`${where}: not JSON`);
    }
    const type = (value as { type?: unknown })?.type;
    if (!header) {
      if (type !== "cassette") throw new CassetteError(`${where}: a cassette starts with a {"type":"cassette"} header line`);
      const version = (value as { version?: unknown }).version;
      if (typeof version === "number" && version > CASSETTE_VERSION) {
        throw new CassetteError(`${source} is cassette version ${version}; this Keen reads version ${CASSETTE_VERSION} (upgrade Keen)`);
      }
    }
    if (typeof type !== "string" || !KNOWN_TYPES.has(type)) continue;
    const parsed = LineSchema.safeParse(value);
    if (!parsed.success) throw new CassetteError(`${where}: ${z.prettifyError(parsed.error).replace(/\n/g, "; ")}`);
    const line = parsed.data;
    if (line.type === "cassette") {
      if (header) throw new CassetteError(`${where}: a second header line`);
      header = line;
      continue;
    }
    if (line.type === "request") {
      if (byN.has(line.n)) throw new CassetteError(`${where}: request ${line.n} appears twice`);
      byN.set(line.n, { request: line, chunks: [] });
      continue;
    }
    const interaction = byN.get(line.n);
    if (!interaction) throw new CassetteError(`${where}: a ${line.type} line for request ${line.n}, which has no request line before it`);
    if (line.type === "response") interaction.response = line;
    else if (line.type === "chunk") interaction.chunks.push(line);
    else interaction.end = line;
  }
  if (!header) throw new CassetteError(`${source} is empty: no cassette header`);
  return { header, interactions: [...byN.values()] };
}
