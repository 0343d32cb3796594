// Conformance pass counts of the CEL engines measured, per section the Kubernetes environment uses.
import { conformanceCases, KUBERNETES_SECTIONS, runConformance } from '../packages/kube-cel/test/conformance-suite.ts';
import { bufbuild, marcbachmann } from '../packages/kube-cel/test/engines.ts';

const cases = conformanceCases().filter((c) => (KUBERNETES_SECTIONS as readonly string[]).includes(c.section));
const results = [marcbachmann, bufbuild].map((e) => ({ engine: e, ...runConformance(e, cases) }));
const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
console.log(line(['section', 'cases', ...results.map((r) => r.engine.name)]));
const totals = results.map(() => 0);
for (const section of KUBERNETES_SECTIONS) {
  const total = results[0]!.sections.get(section)?.total ?? 0;
  console.log(line([section, String(total), ...results.map((r) => String(r.sections.get(section)?.passed ?? 0))]));
  results.forEach((r, i) => (totals[i]! += r.sections.get(section)?.passed ?? 0));
}
console.log(line(['all', String(cases.length), ...totals.map(String)]));
if (process.argv.includes('--failures')) {
  for (const r of results)
    for (const [path, o] of r.failed) console.error(`${r.engine.name}\t${path}\t${JSON.stringify(o)}`);
}
