/** What a tool asks permission for; `summary` is a one-line description for a human. */
export interface PermissionRequest {
  tool: string;
  input: unknown;
  summary: string;
}

/**
 * Decides whether a tool call may run. Contract: never throws; async because an
 * interactive implementation answers through an event and a reply command.
 */
export interface PermissionRequester {
  request(req: PermissionRequest): Promise<"allow" | "deny">;
}

/** For `keen run`: approves everything, dangerous bash included (the file guard still applies). */
export function createAutoApproveRequester(): PermissionRequester {
  return { request: async () => "allow" };
}
