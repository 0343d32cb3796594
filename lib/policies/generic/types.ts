/**
 * The parts of admission policies and their bindings the API server reads when it dispatches a
 * request (admissionregistration.k8s.io/v1), shared by validating and mutating policies.
 */
import type { LabelSelector, MatchCondition } from '../../registration.ts';
import type { RuleWithOperations } from '../../rule-builder.ts';

/** A rule of matchConstraints: a webhook rule that may also name the objects it applies to. */
export interface NamedRuleWithOperations extends RuleWithOperations {
  /** Names of the objects it matches; empty or unset matches every name. */
  resourceNames?: string[];
}

/** Which requests a policy or binding applies to (`MatchResources`). */
export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  /** `Equivalent` also matches a request for an equivalent resource (another version or group). */
  matchPolicy?: 'Exact' | 'Equivalent';
}

/** A named expression whose value the others read as `variables.<name>`. */
export interface Variable {
  name: string;
  expression: string;
}

/** The kind of a policy's param objects. */
export interface ParamKind {
  /** `v1`, `example.com/v1`. */
  apiVersion: string;
  kind: string;
}

/** How a binding finds its params (`ParamRef`). */
export interface ParamRef {
  /** One param by name; exclusive with selector. */
  name?: string;
  /** Every param whose labels match; `{}` selects all. */
  selector?: LabelSelector;
  /** The params' namespace (namespaced paramKind); default the request's. */
  namespace?: string;
  /** What happens when no param is found: `Allow` (evaluate nothing), `Deny` (a configuration error). */
  parameterNotFoundAction?: 'Allow' | 'Deny';
}

/** A policy's part that every kind of policy has. */
export interface PolicyCommon {
  name: string;
  paramKind?: ParamKind;
  matchConstraints?: MatchResources;
  matchConditions?: MatchCondition[];
  variables?: Variable[];
  failurePolicy?: 'Fail' | 'Ignore';
}

/** A binding's part that every kind of binding has. */
export interface BindingCommon {
  name: string;
  policyName: string;
  paramRef?: ParamRef;
  matchResources?: MatchResources;
}

/** The kind and resource a policy matched a request as. */
export interface MatchedAs {
  resource: { group: string; version: string; resource: string };
  kind: { group: string; version: string; kind: string };
}
