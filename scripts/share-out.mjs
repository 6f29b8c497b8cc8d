// How scripts/test-tree.mjs shares the test files that need no process of their own out between
// the processes that run them. Plain JavaScript, run with no loader (types: share-out.d.mts).

/**
 * `files` in `count` groups, the longest first. With the last run's times (`ms`, by path): each
 * file, longest first, to the group with the least time so far, a file the last run did not see
 * counting as a median one, so that the groups end together instead of one running on alone (by
 * path, their times ranged 11-50 s and the suite ended on the longest). Without them: round robin
 * over the files in their order. Each group's files in path order.
 */
export function shareOut(files, count, ms) {
  const groups = Array.from({ length: count }, () => ({ files: [], ms: 0 }));
  if (!ms) {
    files.forEach((file, i) => groups[i % count].files.push(file));
    return groups.map((g) => g.files).filter((g) => g.length > 0);
  }
  const known = files.map((f) => ms[f]).filter((t) => typeof t === 'number').sort((a, b) => a - b);
  const median = known.length > 0 ? known[known.length >> 1] : 0;
  const time = (file) => (typeof ms[file] === 'number' ? ms[file] : median);
  for (const file of [...files].sort((a, b) => time(b) - time(a))) {
    const least = groups.reduce((min, g) => (g.ms < min.ms ? g : min));
    least.files.push(file);
    least.ms += time(file);
  }
  return groups
    .filter((g) => g.files.length > 0)
    .sort((a, b) => b.ms - a.ms)
    .map((g) => g.files.sort());
}
