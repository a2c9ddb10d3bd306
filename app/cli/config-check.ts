import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../mcp/config-file.js";

/**
 * The config texts this build of Keen has already found valid, so that a start whose config is one
 * of them reads it without zod: loading zod, building the config's schemas and compiling the first
 * parse cost ~10 ms of CPU before the first request (docs/performance.md, "Ninth pass").
 *
 * A memo of a pure function. A valid config parses to itself (its schemas have no defaults and no
 * transforms; test/cli/config-check.test.ts holds them to it), so a text the same schemas accepted
 * once is accepted again, with the same result. The record, `<dataDir>/checked-config.json`, holds
 * the build's id (a hash of the sources it was built from: scripts/build.mjs) and the SHA-256 of
 * each text found valid, with the schema it was checked against. A new build, an edited file, a
 * missing or garbled record: zod checks, as it would without it. Run from source (tests, no build
 * id) it records nothing unless given an id.
 */
declare const __KEEN_SOURCE_ID__: string | undefined;

const FILE = "checked-config.json";
/** The newest texts kept: a user and a project config or two per workspace, with room for edits. */
const KEEP = 32;

interface Record {
  build: string;
  valid: string[];
}

export interface ConfigChecks {
  /** Whether this text was found valid against the named schema by this build. */
  has(schema: string, text: string): boolean;
  /** Records that it was. Never throws: a home that cannot be written just checks again next time. */
  add(schema: string, text: string): void;
}

export function configChecks(dataDir: string, build = typeof __KEEN_SOURCE_ID__ === "string" ? __KEEN_SOURCE_ID__ : undefined): ConfigChecks {
  if (!build) return { has: () => false, add: () => {} };
  const file = join(dataDir, FILE);
  let valid: string[] | undefined;
  const load = (): string[] => (valid ??= read(file, build));
  const key = (schema: string, text: string) => createHash("sha256").update(schema).update("\0").update(text).digest("base64url");
  return {
    has: (schema, text) => load().includes(key(schema, text)),
    add(schema, text) {
      const entry = key(schema, text);
      valid = [entry, ...load().filter((k) => k !== entry)].slice(0, KEEP);
      try {
        // Through a rename: a run reading it meanwhile sees the old record or the new one, never half of one.
        writeJsonAtomic(file, { build, valid } satisfies Record, 0o600);
      } catch {
        // Read-only or full: the next start checks with zod, as without a record.
      }
    },
  };
}

function read(file: string, build: string): string[] {
  try {
    const record = JSON.parse(readFileSync(file, "utf8")) as Partial<Record>;
    return record.build === build && Array.isArray(record.valid) ? record.valid.filter((k) => typeof k === "string") : [];
  } catch {
    return [];
  }
}
