// A validator of CloudWatch Embedded Metric Format log lines, shared by the metrics tests.

// The units CloudWatch accepts (MetricDatum), as the EMF specification's JSON schema lists them.
const UNITS = new Set([
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Kilobytes/Second',
  'Megabytes/Second',
  'Gigabytes/Second',
  'Terabytes/Second',
  'Bits/Second',
  'Kilobits/Second',
  'Megabits/Second',
  'Gigabits/Second',
  'Terabits/Second',
  'Count/Second',
  'None',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyKeys = (o: Record<string, unknown>, allowed: string[], where: string, problems: string[]) => {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) problems.push(`${where} has a member the specification does not define: ${k}`);
};

/**
 * Checks one log line against the required fields of the CloudWatch Embedded Metric Format
 * specification; returns the broken rules (empty when valid).
 */
export function emfProblems(line: string): string[] {
  const problems: string[] = [];
  let root: unknown;
  try {
    root = JSON.parse(line);
  } catch {
    return ['the log event is not a JSON object with nothing before or after it'];
  }
  if (!isObject(root)) return ['the root is not an object'];
  const meta = root._aws;
  if (!isObject(meta)) return ['_aws is missing or not an object'];
  onlyKeys(meta, ['Timestamp', 'CloudWatchMetrics'], '_aws', problems);
  if (typeof meta.Timestamp !== 'number' || !Number.isInteger(meta.Timestamp) || meta.Timestamp < 0)
    problems.push('_aws.Timestamp must be an integer number of milliseconds since the epoch');
  if (!Array.isArray(meta.CloudWatchMetrics)) return [...problems, '_aws.CloudWatchMetrics must be an array'];
  for (const [i, directive] of meta.CloudWatchMetrics.entries()) {
    const at = `CloudWatchMetrics[${i}]`;
    if (!isObject(directive)) {
      problems.push(`${at} is not an object`);
      continue;
    }
    onlyKeys(directive, ['Namespace', 'Dimensions', 'Metrics'], at, problems);
    const ns = directive.Namespace;
    if (typeof ns !== 'string' || ns.length < 1 || ns.length > 1024)
      problems.push(`${at}.Namespace must be a string of 1 to 1024 characters`);
    if (!Array.isArray(directive.Dimensions) || directive.Dimensions.length < 1)
      problems.push(`${at}.Dimensions must be a non-empty array of dimension sets`);
    for (const [j, set] of (Array.isArray(directive.Dimensions) ? directive.Dimensions : []).entries()) {
      if (!Array.isArray(set) || set.length > 30) {
        problems.push(`${at}.Dimensions[${j}] must be an array of at most 30 keys`);
        continue;
      }
      for (const key of set) {
        if (typeof key !== 'string' || key.length < 1 || key.length > 250)
          problems.push(`${at}.Dimensions[${j}] holds a key that is not a string of 1 to 250 characters`);
        else if (typeof root[key] !== 'string' || (root[key] as string).length > 1024)
          problems.push(`dimension ${key} must be a root member with a string value of at most 1024 characters`);
      }
    }
    if (!Array.isArray(directive.Metrics) || directive.Metrics.length > 100) {
      problems.push(`${at}.Metrics must be an array of at most 100 metric definitions`);
      continue;
    }
    for (const [j, metric] of directive.Metrics.entries()) {
      if (!isObject(metric)) {
        problems.push(`${at}.Metrics[${j}] is not an object`);
        continue;
      }
      onlyKeys(metric, ['Name', 'Unit', 'StorageResolution'], `${at}.Metrics[${j}]`, problems);
      const name = metric.Name;
      if (typeof name !== 'string' || name.length < 1 || name.length > 1024) {
        problems.push(`${at}.Metrics[${j}].Name must be a string of 1 to 1024 characters`);
        continue;
      }
      if (metric.Unit !== undefined && !UNITS.has(metric.Unit as string))
        problems.push(`metric ${name} has an invalid unit ${String(metric.Unit)}`);
      if (metric.StorageResolution !== undefined && metric.StorageResolution !== 1 && metric.StorageResolution !== 60)
        problems.push(`metric ${name}: StorageResolution must be 1 or 60`);
      const value = root[name];
      const numeric = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
      if (!(numeric(value) || (Array.isArray(value) && value.length <= 100 && value.every(numeric))))
        problems.push(`metric ${name} must be a root member holding a number (or at most 100 numbers)`);
    }
  }
  return problems;
}
