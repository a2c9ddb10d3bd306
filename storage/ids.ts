import { randomBytes } from "node:crypto";

/**
 * A new UUID v7 (RFC 9562): 48-bit Unix milliseconds, version 7, 12 random
 * bits, variant 10, 62 random bits. Ids made in later milliseconds sort after
 * earlier ones as strings, so index range scans come back in creation order.
 */
export function newSessionId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Key of the event with sequence number `seq` in a session database; zero-padded so key order is append order. */
export function newEventKey(seq: number): string {
  return `e:${String(seq).padStart(12, "0")}`;
}
