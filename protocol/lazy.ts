/**
 * A value made on first use, then kept. Zod schemas on a run's path are built this way rather
 * than at module level: the bundle loads zod only when something reads it (scripts/build.mjs,
 * "lazy-zod"), and a text-only run with a config checked before never does (docs/performance.md,
 * "Ninth pass").
 */
export function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
