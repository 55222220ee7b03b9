/**
 * The storyboard schema's validator, compiled at build time (`npm run build` runs it after the ES build):
 * `dist/storyboard/storyboard-validator.cjs`, ajv's standalone code for the schema as the loader validates it
 * (src/storyboard/schema.ts `loaderSchema`, with the same ajv options), and the digest of the schema text it was
 * compiled from, which the loader checks before using it. Saves ajv's compile (~140 ms) in every process that loads a
 * user's storyboard.
 *
 * `node scripts/build-storyboard-validator.mjs [distDir]`: dist/ by default; the tests' shared build names its own.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist');
const schemaModule = await import(pathToFileURL(join(dist, 'storyboard', 'schema.js')).href);

const ajv = new Ajv({ ...schemaModule.STORYBOARD_VALIDATOR_OPTIONS, code: { source: true } });
const code = standaloneCode.default(ajv, ajv.compile(schemaModule.loaderSchema()));
writeFileSync(
  join(dist, 'storyboard', 'storyboard-validator.cjs'),
  `${code}\nmodule.exports.schemaDigest = ${JSON.stringify(schemaModule.storyboardSchemaDigest())};\n`,
);
