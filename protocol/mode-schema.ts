import * as z from "zod";
import { lazy } from "./lazy.js";
import { PERMISSION_MODES } from "./modes.js";

/**
 * The permission modes (protocol/modes.ts) as a schema, alone in its file: the
 * config's schema imports it on every run without the command schemas of
 * protocol/commands.ts (which re-exports it).
 */
export const permissionModeSchema = lazy(() => z.enum(PERMISSION_MODES));
