/**
 * The storyboard as every record of its run names it — id, title, version, track, file, and the agent, protocol and
 * corpus version the run tested — built the same way by both adapters, so their reports key it alike.
 */
import type { RuntimeConfig } from '../config.js';
import type { StoryboardInfo } from '../model/step-meta.js';
import type { Storyboard } from '../model/storyboard.js';
import { runTarget } from '../report/envelope.js';

export function storyboardInfo(storyboard: Storyboard, config: RuntimeConfig): StoryboardInfo {
  return {
    id: storyboard.id,
    title: storyboard.title,
    version: storyboard.version,
    track: storyboard.track,
    file: storyboard.file,
    ...runTarget(config),
  };
}
