import type { Theme } from "./tokens.js";

/** Dark text for a light terminal background. */
export const light: Theme = {
  name: "light",
  mono: false,
  tokens: {
    text: {},
    dim: { fg: "#6a737d" },
    accent: { fg: "#0550ae", bold: true },
    user: { fg: "#953800", bold: true },
    assistant: { fg: "#116329", bold: true },
    thinking: { fg: "#6a737d" },
    tool: { fg: "#8250df" },
    success: { fg: "#116329" },
    error: { fg: "#cf222e", bold: true },
    warning: { fg: "#9a6700" },
    diffAdd: { fg: "#116329" },
    diffDel: { fg: "#cf222e" },
    diffHunk: { fg: "#0550ae" },
    diffMeta: { fg: "#6a737d", bold: true },
    border: { fg: "#afb8c1" },
    borderFocus: { fg: "#0550ae" },
    status: { fg: "#24292f", bg: "#d0d7de" },
    statusAccent: { fg: "#ffffff", bg: "#0550ae", bold: true },
    selection: { inverse: true },
    risky: { fg: "#ffffff", bg: "#cf222e", bold: true },
    code: { fg: "#953800" },
    heading: { fg: "#0550ae", bold: true },
    link: { fg: "#0550ae", underline: true },
    queued: { fg: "#6a737d" },
  },
};
