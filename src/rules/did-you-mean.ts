import { distance } from 'fastest-levenshtein';

/** One step of a path into a rule file's value: a key or an array index. */
export type PathSegment = string | number;

/**
 * "Did you mean" for misspelt keys and operators: the closest candidate within two edits (one for words
 * of up to four characters), so `wehre` suggests `where` but an unrelated word suggests nothing.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = word.length <= 4 ? 1 : 2;
  let best: { candidate: string; edits: number } | undefined;
  for (const candidate of candidates) {
    const edits = distance(word.toLowerCase(), candidate.toLowerCase());
    if (edits <= limit && (best === undefined || edits < best.edits)) best = { candidate, edits };
  }
  return best?.candidate;
}

/** ` (did you mean "where"?)`, or '' when nothing is near. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const near = nearest(word, candidates);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}
