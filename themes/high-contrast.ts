import type { Theme } from "./tokens.js";

/** The 16 ANSI colours only, bold where it helps: readable on any background and palette. */
export const highContrast: Theme = {
  name: "high-contrast",
  mono: false,
  tokens: {
    text: {},
    dim: { fg: "white" },
    accent: { fg: "brightcyan", bold: true },
    user: { fg: "brightyellow", bold: true },
    assistant: { fg: "brightgreen", bold: true },
    thinking: { fg: "white" },
    tool: { fg: "brightmagenta", bold: true },
    success: { fg: "brightgreen", bold: true },
    error: { fg: "brightred", bold: true },
    warning: { fg: "brightyellow", bold: true },
    diffAdd: { fg: "brightgreen", bold: true },
    diffDel: { fg: "brightred", bold: true },
    diffHunk: { fg: "brightcyan", bold: true },
    diffMeta: { bold: true },
    border: { fg: "white" },
    borderFocus: { fg: "brightyellow", bold: true },
    status: { inverse: true },
    statusAccent: { fg: "black", bg: "brightyellow", bold: true },
    selection: { inverse: true },
    risky: { fg: "brightwhite", bg: "red", bold: true },
    code: { fg: "brightyellow" },
    heading: { bold: true, underline: true },
    link: { underline: true },
    queued: { fg: "white" },
  },
};
