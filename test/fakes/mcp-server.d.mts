/** Types of test/fakes/mcp-server.mjs (see its header). */
export const PNG_BASE64: string;
export function createFakeServer(): unknown;
export function startHttpMcpServer(options?: { legacySse?: boolean }): Promise<{
  url: string;
  requests: { method: string; url: string; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}>;
