import { loadStoryboard, type LoadOptions, type LoadResult } from '../../src/storyboard/index.js';
import type { Diagnostic } from '../../src/model/storyboard.js';

/** A storyboard header plus the given `phases:` block (indented as in a file). */
export function storyboardYaml(phases: string, header = ''): string {
  return `id: sample\ntitle: Sample\n${header}phases:\n${phases.replace(/^\n/, '')}`;
}

export function load(source: string, file = 'sample.yaml', options: LoadOptions = {}): LoadResult {
  return loadStoryboard(source, file, options);
}

export function errorsOf(result: LoadResult): Diagnostic[] {
  return result.diagnostics.filter((d) => d.severity === 'error');
}

export function rulesOf(result: LoadResult): string[] {
  return result.diagnostics.map((d) => d.rule);
}
