/** Types of test/fakes/mcp-tools.mjs (see its header). */
export const PNG_BASE64: string;
export function createFakeServer(): unknown;
export function createStressTools(server: unknown, counts: { list: number }): void;
