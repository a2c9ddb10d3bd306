declare const KEEN_VERSION: string;

/** Keen's version: package.json's, put in by the bundle (scripts/build.mjs); a dev build from source says so. */
export const version = typeof KEEN_VERSION === "string" ? KEEN_VERSION : "0.0.0-dev";
