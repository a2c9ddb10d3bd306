import * as z from "zod";
import { PERMISSION_MODES } from "./modes.js";

/**
 * The permission modes (protocol/modes.ts) as a schema, alone in its file: the
 * config's schema imports it on every run without the command schemas of
 * protocol/commands.ts (which re-exports it).
 */
export const PermissionModeSchema = z.enum(PERMISSION_MODES);
