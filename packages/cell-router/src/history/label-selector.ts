/** Whether an object's labels satisfy a selector. */
export type LabelMatcher = (labels: Readonly<Record<string, string>>) => boolean;

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

/**
 * A `labelSelector` query as kube-apiserver reads it (apimachinery's labels.Parse): comma-separated
 * requirements `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`, `key>n`,
 * `key<n`. Undefined for what it cannot read: the apiserver then refuses the request itself, and nothing
 * is decided here on a guess.
 */
export function parseLabelSelector(selector: string): LabelMatcher | undefined {
  const requirements: Requirement[] = [];
  for (const term of splitTerms(selector)) {
    const requirement = parseTerm(term.trim());
    if (!requirement) return undefined;
    requirements.push(requirement);
  }
  return (labels) => requirements.every((requirement) => requirement(labels));
}

/** Commas outside parentheses separate requirements; an empty selector has none. */
function splitTerms(selector: string): string[] {
  if (selector.trim() === '') return [];
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const char = selector[i];
    if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    else if (char === ',' && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

const KEY = String.raw`(?:[A-Za-z0-9.\-]+/)?[A-Za-z0-9](?:[A-Za-z0-9_.\-]*[A-Za-z0-9])?`;
const VALUE = String.raw`(?:[A-Za-z0-9](?:[A-Za-z0-9_.\-]*[A-Za-z0-9])?)?`;
const EXISTS = new RegExp(`^(!?)\\s*(${KEY})$`);
const EQUALS = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const COMPARE = new RegExp(`^(${KEY})\\s*(<|>)\\s*(-?[0-9]+)$`);

function parseTerm(term: string): Requirement | undefined {
  let match = EXISTS.exec(term);
  if (match) {
    const [, not, key] = match as unknown as [string, string, string];
    return not ? (labels) => !has(labels, key) : (labels) => has(labels, key);
  }
  match = EQUALS.exec(term);
  if (match) {
    const [, key, op, value] = match as unknown as [string, string, string, string];
    return op === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
  }
  match = SET.exec(term);
  if (match) {
    const [, key, op, list] = match as unknown as [string, string, string, string];
    const values = list.split(',').map((value) => value.trim());
    if (values.some((value) => !new RegExp(`^${VALUE}$`).test(value))) return undefined;
    const set = new Set(values);
    return op === 'in'
      ? (labels) => has(labels, key) && set.has(labels[key]!)
      : (labels) => !has(labels, key) || !set.has(labels[key]!);
  }
  match = COMPARE.exec(term);
  if (match) {
    const [, key, op, bound] = match as unknown as [string, string, string, string];
    const limit = Number(bound);
    return (labels) => {
      if (!has(labels, key) || !/^-?[0-9]+$/.test(labels[key]!)) return false;
      const value = Number(labels[key]);
      return op === '<' ? value < limit : value > limit;
    };
  }
  return undefined;
}

function has(labels: Readonly<Record<string, string>>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(labels, key);
}
