/** Types of what the tests use from scripts/snapshot.mjs (see its header). */
export const MEASURED: string;
export function snapshotWins(figures: { snapshotMs: number; plainMs: number }): boolean;
