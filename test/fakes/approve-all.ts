import type { PermissionRequester } from "../../app/permissions/requester.js";

/** A requester that lets every call run, for tests of the loop itself (what the gate decides is tested in test/permissions). */
export const approveAll: PermissionRequester = { request: async () => ({ allow: true }) };
