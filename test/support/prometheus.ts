import { execFileSync } from 'node:child_process';

/**
 * A scrape of `/metrics` read back by the Prometheus project's own Python client parser
 * (`prometheus_client.parser`, Debian's `python3-prometheus-client`), not by the library that wrote
 * it: what the tests assert is what a Prometheus-compatible reader takes from the text. Its parser
 * is strict (a malformed line, a sample outside its family, a bad escape is an error). The npm
 * parsers `parse-prometheus-text-format` (1.1.1) and `exposition` (1.2.0) were tried and dropped:
 * both merge the series of a labelled histogram into one, losing their labels, sums and counts.
 * Tried later (November 2026) and dropped too: `prom2javascript` (0.2.0, one release, December
 * 2024) keeps a labelled histogram's series apart but reads a `+Inf` value as null, refuses `-Inf`
 * and `NaN`, and takes a bad escape (`\q`) as text; `@platformatic/promotel`'s parser (0.2.2) drops
 * without a word every sample with NaN or ±Inf, with `{` or `}` in a label value, and malformed
 * lines. So this one Debian package stays: a test file importing this module is skipped, with one line naming
 * the package, where it is missing, and fails with CI=true (test/support/requirements.ts).
 */
interface Sample {
  name: string;
  labels: Record<string, string>;
  /** `nan`, `inf`, `-inf` as text. */
  value: number | string;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'unknown';
  samples: Sample[];
}

export interface Scrape {
  families: Map<string, Family>;
  /** Every name a `# TYPE` line declares, samples or not, and what a histogram's samples are named (`_bucket`, `_sum`, `_count`). */
  declared: Set<string>;
  /** The sample `name` (a family's name, or e.g. `x_count`) whose labels include `labels`; 0 when none. */
  value(name: string, labels?: Record<string, string>): number;
  /** A histogram's count and sum for the one series whose labels include `labels`. */
  histogram(name: string, labels?: Record<string, string>): { count: number; sum: number };
  /** Every label set the family `name`'s samples carry (`le` left out). */
  series(name: string): Array<Record<string, string>>;
}

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
number = lambda v: v if math.isfinite(v) else str(v)
families = [{"name": f.name, "type": f.type, "samples": [{"name": s.name, "labels": s.labels, "value": number(s.value)} for s in f.samples]}
            for f in text_string_to_metric_families(sys.stdin.read())]
print(json.dumps(families))
`;

/** Debian's Python, where the package is installed (a pyenv or venv `python3` on PATH may not have it). */
const PYTHON = '/usr/bin/python3';

const includes = (have: Record<string, string>, want: Record<string, string>) => Object.entries(want).every(([k, v]) => have[k] === v);

export function parseScrape(text: string): Scrape {
  let out: string;
  try {
    out = execFileSync(PYTHON, ['-c', PARSE], { input: text, encoding: 'utf8' });
  } catch (error) {
    throw new Error(`the Prometheus parser refused the scrape (apt-get install python3-prometheus-client if it is missing): ${(error as { stderr?: string }).stderr ?? error}`);
  }
  // The Python client names a counter's family without `_total`; samples keep it.
  const families = new Map<string, Family>();
  for (const family of JSON.parse(out) as Family[]) {
    families.set(family.name, family);
    if (family.type === 'counter') families.set(`${family.name}_total`, family);
  }
  const samples = (name: string, labels: Record<string, string>) => {
    const family = families.get(name) ?? families.get(name.replace(/_(count|sum|bucket)$/, ''));
    if (family === undefined) throw new Error(`no metric ${name} in the scrape`);
    return family.samples.filter((s) => s.name === name && includes(s.labels, labels));
  };
  const one = (name: string, labels: Record<string, string>) => {
    const found = samples(name, labels);
    if (found.length > 1) throw new Error(`${name}: ${found.length} series match ${JSON.stringify(labels)}`);
    return Number(found[0]?.value ?? 0);
  };
  return {
    families,
    declared: new Set(
      [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => name! + s) : [name!])),
    ),
    value: (name, labels = {}) => one(name, labels),
    histogram(name, labels = {}) {
      if (families.get(name)?.type !== 'histogram') throw new Error(`${name} is not a histogram in the scrape`);
      if (samples(`${name}_count`, labels).length !== 1) throw new Error(`${name}: not exactly one series matches ${JSON.stringify(labels)}`);
      return { count: one(`${name}_count`, labels), sum: one(`${name}_sum`, labels) };
    },
    series(name) {
      const family = families.get(name);
      if (family === undefined) throw new Error(`no metric ${name} in the scrape`);
      const seen = new Map<string, Record<string, string>>();
      for (const { labels } of family.samples) {
        const { le: _le, ...rest } = labels;
        seen.set(JSON.stringify(rest), rest);
      }
      return [...seen.values()];
    },
  };
}
