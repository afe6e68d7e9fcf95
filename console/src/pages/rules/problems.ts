import type { ApiProblem } from '../../api/client';

/**
 * The problem to show in a block of its own: none when the API named only fields that the form
 * shows the message next to, else the whole problem (a 409, a 403, a path no control has).
 */
export function unplaced(problem: ApiProblem | undefined, isShown: (path: string) => boolean): ApiProblem | undefined {
  if (!problem || problem.errors.length === 0) return problem;
  return problem.errors.every((e) => isShown(e.path)) ? undefined : problem;
}
