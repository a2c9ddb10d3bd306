/** Types of scripts/sandbox-patches.mjs (see its header). */
export interface SandboxPatch {
  name: string;
  file: string;
  why: string;
  mark: string;
  edits: { find: string; replace: string }[];
}
export const SANDBOX_PATCHES: SandboxPatch[];
export function applyPatch(text: string, patch: SandboxPatch): string;
export function sandboxPatches(patches?: SandboxPatch[]): { name: string; setup(build: unknown): void };
