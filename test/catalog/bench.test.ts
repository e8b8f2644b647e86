// The catalog bench must not rot: a run with tiny counts and its report's shape.
import { describe, expect, it } from 'vitest';
import { runCatalogBench } from '../../bench/catalog.js';

describe('catalog bench smoke', () => {
  it('lists, serves from the cache, and follows list_changed with tiny counts', async () => {
    const report = await runCatalogBench(3, 5, 10);
    expect(report.tools).toBe(15);
    for (const value of [
      report.firstMs,
      report.cachedMedianUs,
      report.afterListChangedMedianMs,
      report.rebuildMedianMs,
    ])
      expect(value).toEqual(expect.any(Number));
  });
});
