/**
 * cel-go's homogeneous aggregate literal validator, as API servers from 1.29 run it (cel-go 0.17
 * and later implement cel.HomogeneousAggregateLiterals as this validator): after checking, the
 * elements of a list literal, and the keys and the values of a map literal, must be of equivalent
 * types. A dyn or null element does not mix with a typed one (`[object.x, 'a']` is refused), unlike the
 * checker's join before (1.27, 1.28). Literals inside a `format` call are exempt, as the string
 * format validator asks; an empty literal or `optional.none()` takes any type.
 */
import type { ASTNode } from '../engine.ts';
import { celGoType } from './words.ts';
import { optionalEntries } from '../evaluate/entries.ts';
import { hasFreeType } from '../evaluate/optionals.ts';

/** True for a `format` call, whose literals (at any depth) the literal checks exempt. */
export function isFormatCall(node: { op?: string; args?: unknown }): boolean {
  return (node.op === 'rcall' || node.op === 'call') && (node.args as unknown[])[0] === 'format';
}

/** The first API server version whose cel-go checks aggregate literals this way. */
export const STRICT_LITERALS_SINCE = 29;

/** A refusal found in a literal: the message and where. */
export interface LiteralRefusal {
  summary: string;
  range: { start: number };
}

/** The types the checker joins with any other, which the validator does not. */
const LOOSE = new Set(['dyn', 'null']);

type Typed = ASTNode & { checkedType?: { name: string; valueType?: unknown } };

/** The first element of `parts` whose type differs from the first's, as a refusal. */
function mismatch(parts: ASTNode[], unwrap: (i: number) => boolean): LiteralRefusal | undefined {
  let first: Typed['checkedType'];
  for (const [i, part] of parts.entries()) {
    if (hasFreeType(part)) continue;
    let type = (part as Typed).checkedType;
    if (unwrap(i)) type = type?.valueType as Typed['checkedType'];
    if (!type) continue;
    if (!first) first = type;
    // A dyn or null part beside another type: the checker's join (literal checks in
    // semantics.ts) takes every other mix.
    else if (type.name !== first.name && (LOOSE.has(type.name) || LOOSE.has(first.name)))
      return {
        summary: `expected type '${celGoType(first as never)}' but found '${celGoType(type as never)}'`,
        range: { start: part.start },
      };
  }
  return undefined;
}

/** The refusal of one list or map literal, if its parts are not of one type. */
export function literalRefusal(node: ASTNode): LiteralRefusal | undefined {
  const entries = optionalEntries(node);
  if (node.op === 'list') return mismatch(node.args as ASTNode[], (i) => !!entries?.has(i));
  if (node.op !== 'map') return undefined;
  const pairs = node.args as unknown as Array<[ASTNode, ASTNode]>;
  return (
    mismatch(
      pairs.map((p) => p[0]),
      () => false,
    ) ??
    mismatch(
      pairs.map((p) => p[1]),
      (i) => !!entries?.has(i),
    )
  );
}
