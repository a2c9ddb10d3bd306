import { main } from "./main.js";

// A closed stdout must never crash with a stack trace; writers notice it themselves.
process.stdout.on("error", () => {});
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`keen: internal error: ${String(error)}\n`);
    process.exit(1);
  },
);
