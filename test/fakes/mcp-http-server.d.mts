/** Types of test/fakes/mcp-http-server.mjs (see its header). */
export function startHttpMcpServer(options?: { legacySse?: boolean }): Promise<{
  url: string;
  requests: { method: string; url: string; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}>;
