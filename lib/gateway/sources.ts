// The event sources, one module each under sources/. A new source is one new file there
// exporting a GatewaySource<'name'> and its SourceTools<'name'>, and its entry in SOURCES below:
// EventSource (sources/types.ts) names the same sources, checked at compile time, so the compiler
// then asks for its entry in SOURCE_TOOLS. The handler, the CLI's --event-format choices, the test kit and the emulator
// follow the lists.
import { albSource, albTools } from './sources/alb.ts';
import { functionUrlSource, functionUrlTools } from './sources/function-url.ts';
import { httpApiSource, httpApiTools } from './sources/http-api.ts';
import { restSource, restTools } from './sources/rest.ts';
import type { EventSource, GatewaySource, SourceTools } from './sources/types.ts';

export type {
  EventSource,
  GatewayRequest,
  GatewayResult,
  GatewaySource,
  HttpReply,
  HttpRequestInput,
  HttpResponse,
  SourceTools,
} from './sources/types.ts';
export { albSource, functionUrlSource, httpApiSource, restSource };

/**
 * Every source the handler accepts, in the order they are tried: most specific first
 * (a function URL event is also a 2.0 event; an ALB event also has REST's `httpMethod`).
 */
export const SOURCES = [functionUrlSource, httpApiSource, albSource, restSource] as const;

/**
 * The sources a handler answers: all of `SOURCES`, but in a function bundle built for a deployment
 * that no such source fronts the build sets `process.env.KLW_BUNDLE_NO_<NAME>` to "1" (infra/build.ts),
 * so the bundle carries none of that source's code. Outside bundles the variables are unset.
 */
export const BUNDLED_SOURCES: readonly GatewaySource[] = [
  process.env.KLW_BUNDLE_NO_URL === '1' ? undefined : functionUrlSource,
  process.env.KLW_BUNDLE_NO_HTTP === '1' ? undefined : httpApiSource,
  process.env.KLW_BUNDLE_NO_ALB === '1' ? undefined : albSource,
  process.env.KLW_BUNDLE_NO_REST === '1' ? undefined : restSource,
].filter((source) => source !== undefined);

/** The names of the sources in `SOURCES`; `EventSource` must name exactly these. */
type SourceNames = (typeof SOURCES)[number]['name'];
/** Compiles only while `EventSource` (sources/types.ts) and the names in `SOURCES` agree both ways. */
const sourceNamesAgree: [SourceNames] extends [EventSource]
  ? [EventSource] extends [SourceNames]
    ? true
    : never
  : never = true;
void sourceNamesAgree;

/** The source that reads an event, or undefined when none of them delivered it. */
export function detectSource(
  event: unknown,
  sources: readonly GatewaySource[] = BUNDLED_SOURCES,
): GatewaySource | undefined {
  for (const source of sources) if (source.detect(event)) return source;
  return undefined;
}

/**
 * Each source's event builder and result reader, by name, in the order the CLI lists them
 * (the default first). Only tools import this; function bundles drop it.
 */
export const SOURCE_TOOLS: Readonly<Record<EventSource, SourceTools>> = {
  http: httpApiTools,
  rest: restTools,
  url: functionUrlTools,
  alb: albTools,
};

/** The tools of the source named `name`; a TypeError for a name no source has. */
export function toolsFor(name: EventSource): SourceTools {
  if (!Object.hasOwn(SOURCE_TOOLS, name)) throw new TypeError(`unknown event source ${JSON.stringify(name)}`);
  return SOURCE_TOOLS[name];
}

/** The source names, as `--event-format` and `toEvent`'s `format` take them. */
export function sourceNames(): EventSource[] {
  return Object.keys(SOURCE_TOOLS) as EventSource[];
}

/** `http (API Gateway HTTP API ...), rest (...)`: the names with what each one is, for help texts. */
export function describeSources(): string {
  return Object.values(SOURCE_TOOLS)
    .map((tools) => `${tools.source.name} (${tools.source.describe})`)
    .join(', ');
}
