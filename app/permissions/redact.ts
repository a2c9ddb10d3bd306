/** What a known secret value is replaced with wherever Keen could show or store it. */
export const REDACTED = "[redacted]";
