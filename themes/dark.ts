import type { Theme } from "./tokens.js";

/** The default: light text on a dark terminal background. */
export const dark: Theme = {
  name: "dark",
  mono: false,
  tokens: {
    text: {},
    dim: { fg: "#7f8490" },
    accent: { fg: "#61afef", bold: true },
    user: { fg: "#e5c07b", bold: true },
    assistant: { fg: "#98c379", bold: true },
    thinking: { fg: "#7f8490" },
    tool: { fg: "#c678dd" },
    success: { fg: "#98c379" },
    error: { fg: "#e06c75", bold: true },
    warning: { fg: "#d19a66" },
    diffAdd: { fg: "#98c379" },
    diffDel: { fg: "#e06c75" },
    diffHunk: { fg: "#56b6c2" },
    diffMeta: { fg: "#7f8490", bold: true },
    border: { fg: "#4b5263" },
    borderFocus: { fg: "#61afef" },
    status: { fg: "#d7dae0", bg: "#2c313a" },
    statusAccent: { fg: "#282c34", bg: "#61afef", bold: true },
    selection: { inverse: true },
    risky: { fg: "#ffffff", bg: "#be5046", bold: true },
    code: { fg: "#e5c07b" },
    heading: { fg: "#61afef", bold: true },
    link: { fg: "#56b6c2", underline: true },
    queued: { fg: "#7f8490" },
  },
};
