/**
 * The literal entries of the AAO v1 → canonical format mapping registry (schemas/registries/v1-canonical-mapping.json,
 * registry version 1.3.1 as AdCP 3.1.15 ships it): the `format_id_glob` patterns, in the registry's order, each with
 * the canonical `format_kind` and the parameters a legacy `format_id` projects to. canonical_format_satisfaction reads
 * them to normalise a package's legacy `format_ids[]` (the registry's resolution order: step 3, the glob entries, after
 * step 1, the product's own `v1_format_ref[]`).
 *
 * Kept here as data, not read from the installed schemas: a check is a pure function, the installed @adcp/sdk may ship
 * schemas older than 3.1, and the registry is additive ("once published they are not removed"), so what this copy
 * projects stays right under later registry versions (which may project more ids).
 *
 * Left out on purpose:
 * - the `structural` entries (VAST/DAAST versions, zip, video, audio, url): they match a v1 format's slot shape and
 *   asset types, which a bare `{ agent_url, id }` does not carry;
 * - `pixel_ratios`, and the `_1x_2x` entries' `slots`, which exist to carry `required_pixel_ratios`: in 3.1.x these
 *   are opaque forward-projection metadata that MUST NOT be interpreted as constraints (the registry's "Pixel-density
 *   version boundary"), so they take no part in satisfaction; the `_2x` / `_1x_2x` ids project to their width and
 *   height alone.
 */

export interface CanonicalProjection {
  format_kind: string;
  params: Readonly<Record<string, unknown>>;
}

type Entry = readonly [id: string, formatKind: string, params?: Readonly<Record<string, unknown>>];

const size = (width: number, height: number) => ({ width, height });

const ENTRIES: readonly Entry[] = [
  ['display_static', 'image'],
  ['display_300x250', 'image', size(300, 250)],
  ['display_728x90', 'image', size(728, 90)],
  ['display_320x50', 'image', size(320, 50)],
  ['display_300x600', 'image', size(300, 600)],
  ['display_970x250', 'image', size(970, 250)],
  ['display_250x250', 'image', size(250, 250)],
  ['display_200x200', 'image', size(200, 200)],
  ['display_300x50', 'image', size(300, 50)],
  ['display_320x480', 'image', size(320, 480)],
  ['display_320x400', 'image', size(320, 400)],
  ['display_320x320', 'image', size(320, 320)],
  ['display_320x250', 'image', size(320, 250)],
  ['display_300x250_image_2x', 'image', size(300, 250)],
  ['display_728x90_image_2x', 'image', size(728, 90)],
  ['display_320x50_image_2x', 'image', size(320, 50)],
  ['display_160x600_image_2x', 'image', size(160, 600)],
  ['display_336x280_image_2x', 'image', size(336, 280)],
  ['display_300x600_image_2x', 'image', size(300, 600)],
  ['display_970x250_image_2x', 'image', size(970, 250)],
  ['display_300x250_image_1x_2x', 'image', size(300, 250)],
  ['display_728x90_image_1x_2x', 'image', size(728, 90)],
  ['display_320x50_image_1x_2x', 'image', size(320, 50)],
  ['display_160x600_image_1x_2x', 'image', size(160, 600)],
  ['display_336x280_image_1x_2x', 'image', size(336, 280)],
  ['display_300x600_image_1x_2x', 'image', size(300, 600)],
  ['display_970x250_image_1x_2x', 'image', size(970, 250)],
  ['video_30s', 'video_hosted', { duration_ms_exact: 30000 }],
  ['video_15s', 'video_hosted', { duration_ms_exact: 15000 }],
  ['video_pre_roll_30s', 'video_hosted', { duration_ms_exact: 30000 }],
  ['video_pre_roll_15s', 'video_hosted', { duration_ms_exact: 15000 }],
  ['video_640x480', 'video_hosted', size(640, 480)],
  ['video_300x250', 'video_hosted', size(300, 250)],
  ['video_16x9_30s', 'video_hosted', { aspect_ratio: '16:9', duration_ms_exact: 30000 }],
  ['video_640x360_vast', 'video_vast', size(640, 360)],
  ['audio_15s', 'audio_hosted', { duration_ms_exact: 15000 }],
];

const BY_ID: ReadonlyMap<string, Entry> = new Map(ENTRIES.map((entry) => [entry[0], entry]));

/**
 * The canonical a legacy format id projects to through the registry's literal entries, or undefined. Every entry of
 * version 1.3.1 is a non-wildcarded literal, so the first match the registry prescribes ("SDKs apply mappings in order
 * and use the first match") is the one equal id. The registry matches `format_id.id` alone: its slugs carry no
 * `agent_url`.
 */
export function projectV1FormatId(id: string): CanonicalProjection | undefined {
  const entry = BY_ID.get(id);
  return entry && { format_kind: entry[1], params: entry[2] ?? {} };
}
