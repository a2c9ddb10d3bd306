/*
 * The image types Keen sends, as a plain list: the prompt-image reader imports
 * it on every run, without the zod schemas of protocol/messages.ts (which
 * builds ImageMediaTypeSchema from it and re-exports it).
 */

/** The image types every provider takes (and read_file and prompts accept). */
export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
