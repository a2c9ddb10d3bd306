/** What a response body is to web_fetch: a page to convert, text to return as it is, or bytes it refuses. */
export type BodyKind = "html" | "text" | "binary";

const TEXT_TYPES = new Set([
  "application/json", "application/xml", "application/javascript", "application/x-javascript", "application/ecmascript",
  "application/x-sh", "application/toml", "application/yaml", "application/x-yaml", "application/sql", "application/graphql",
  "application/x-ndjson", "application/csv", "application/rss+xml", "application/atom+xml",
]);

/** The media type without parameters, lower case ("" when absent). */
export function essence(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

export function bodyKind(contentType: string, body: Buffer): BodyKind {
  const type = essence(contentType);
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type.startsWith("text/") || TEXT_TYPES.has(type) || type.endsWith("+json") || type.endsWith("+xml")) return "text";
  // No type, or the generic one: by the bytes (a NUL is never in text; markup starts like markup).
  if (type === "" || type === "application/octet-stream") {
    const head = body.subarray(0, 1024);
    if (head.includes(0)) return "binary";
    return /^\s*<(!doctype html|html)/i.test(head.toString("latin1")) ? "html" : "text";
  }
  return "binary";
}

/** The body as text, in the charset the header names, else a `<meta charset>` of a page, else UTF-8. */
export function decodeBody(body: Buffer, contentType: string, kind: BodyKind): string {
  let charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!charset && kind === "html") {
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 4096).toString("latin1"))?.[1];
  }
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body); // A charset name TextDecoder does not know.
  }
}
