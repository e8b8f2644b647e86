/** Reading zod's issues for a config error. */
import type { z } from 'zod';
import { closest } from './did-you-mean.js';

interface Leaf {
  path: PropertyKey[];
  message: string;
  /** An `unrecognized_keys` issue's keys: a near miss of a key the schema knows there is named. */
  unknownKeys?: string[];
}

/**
 * A union that failed (`keepalive: false | {…}`) names the field of the one branch the value was
 * meant for (its issues are all inside it), not just "Invalid input" at the union.
 */
export function leafIssues(issues: readonly z.core.$ZodIssue[]): Leaf[] {
  return issues.flatMap((issue): Leaf[] => {
    const meant =
      issue.code === 'invalid_union' ? issue.errors.filter((branch) => branch.every((i) => i.path.length > 0)) : [];
    if (meant.length !== 1)
      return [
        {
          path: issue.path,
          message: issue.message,
          ...(issue.code === 'unrecognized_keys' ? { unknownKeys: issue.keys } : {}),
        },
      ];
    return leafIssues(meant[0]!).map((leaf) => ({ ...leaf, path: [...issue.path, ...leaf.path] }));
  });
}

/** Every key an object the schema accepts at `path` may have (through optionals, defaults, unions, records). */
function keysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  const inner = (key: string) => def[key] as z.core.$ZodType;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return keysAt(inner('innerType'), path);
    case 'pipe':
      return keysAt(inner('in'), path);
    case 'lazy':
      return keysAt((def.getter as () => z.core.$ZodType)(), path);
    case 'union':
      return (def.options as z.core.$ZodType[]).flatMap((option) => keysAt(option, path));
    case 'object': {
      const shape = def.shape as Record<string, z.core.$ZodType>;
      if (path.length === 0) return Object.keys(shape);
      const field = shape[String(path[0])];
      return field ? keysAt(field, path.slice(1)) : [];
    }
    case 'record':
      return path.length === 0 ? [] : keysAt(inner('valueType'), path.slice(1));
    case 'array':
      return path.length === 0 ? [] : keysAt(inner('element'), path.slice(1));
    default:
      return [];
  }
}

/** "Unrecognized key" with the key meant, when one at that place is close (`auth.clientID` → `clientId`). */
export function issueMessage(schema: z.core.$ZodType, leaf: Leaf): string {
  if (!leaf.unknownKeys) return leaf.message;
  const known = keysAt(schema, leaf.path);
  const hints = leaf.unknownKeys.flatMap((key) => {
    const meant = closest(key, known);
    return meant ? [`\`${key}\`: did you mean \`${meant}\`?`] : [];
  });
  return hints.length ? `${leaf.message} (${hints.join('; ')})` : leaf.message;
}
