/** `preset: 'vitest-adcp/jest'`: Jest resolves `<preset>/jest-preset` (package export `./jest/jest-preset`). */
const { createJestPreset } = require('./preset.cjs') as { createJestPreset: () => object };
module.exports = createJestPreset();
